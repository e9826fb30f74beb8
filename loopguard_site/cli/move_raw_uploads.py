"""`loopguard move-raw-uploads [--dry-run]`: move the stored raw uploads to
where LOOPGUARD_RAW_STORAGE keeps new ones (into the file or S3 storage, or
back into the database with `db`), one row at a time, each only once its copy
reads back with the right SHA-256 (transcripts.raw_uploads). Every upload
stays readable throughout; run it again after an interruption.

One line per upload on stdout (``moved the raw upload of session N (S
bytes) to WHERE``), then the totals. Exit status: 0 every upload moved, 1
some could not be (each named on stderr; they stay where they were).
"""

from __future__ import annotations

import argparse
import os
import sys

NAME = "move-raw-uploads"  # the command; a module name cannot hold a hyphen
HELP = "move stored raw uploads to the storage LOOPGUARD_RAW_STORAGE names (db, file or s3)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="say what would move, move nothing")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from loopguard_site.transcripts.raw_uploads import raw_uploads_move

    outcome = raw_uploads_move(dry_run=args.dry_run, report=print)
    for error in outcome.errors:
        print(f"loopguard move-raw-uploads: {error}", file=sys.stderr)
    done = "would move" if args.dry_run else "moved"
    print(f"{done} {outcome.moved} raw uploads ({outcome.bytes:,} bytes); {len(outcome.errors)} could not move")
    return 1 if outcome.errors else 0
