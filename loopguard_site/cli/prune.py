"""`loopguard prune [--older-than AGE] [--keep-labelled] [--dry-run]`:
delete the sessions created more than AGE ago (30d, 12h, 2w; default:
LOOPGUARD_RETENTION_DAYS days), with everything stored about them, in
batches of small transactions (review.retention). Sessions still
streaming are kept; `--keep-labelled` keeps those a reviewer labelled.

One line per batch on stdout, ``deleted N sessions (ids A–B): E events, R
raw uploads (S bytes)`` (``would delete`` with `--dry-run`, which deletes
nothing), then the totals.

Exit status: 0 done (also when nothing was old enough), 2 usage (a bad AGE,
or no AGE and LOOPGUARD_RETENTION_DAYS off).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import timedelta

HELP = "delete sessions older than an age (default: LOOPGUARD_RETENTION_DAYS), in small batches"
UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def age(text: str) -> timedelta:
    """`30d`, `12h` or `2w` as a timedelta (argparse type)."""
    match = re.fullmatch(r"(\d+)([hdw])", text.strip())
    if match is None or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age: give a number and a unit h, d or w (e.g. 30d)")
    return timedelta(**{UNITS[match[2]]: int(match[1])})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--older-than", type=age, default=None, metavar="AGE", help="30d, 12h, 2w (default: LOOPGUARD_RETENTION_DAYS)"
    )
    parser.add_argument("--keep-labelled", action="store_true", help="keep sessions a reviewer labelled")
    parser.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.utils import timezone

    from loopguard_site.review.retention import sessions_prune

    older_than = args.older_than
    if older_than is None:
        if not settings.LOOPGUARD_RETENTION_DAYS:
            print("loopguard prune: give --older-than AGE, or set LOOPGUARD_RETENTION_DAYS", file=sys.stderr)
            return 2
        older_than = timedelta(days=settings.LOOPGUARD_RETENTION_DAYS)
    before = timezone.now() - older_than
    kept = ", keeping labelled ones" if args.keep_labelled else ""
    print(f"sessions created before {before:%Y-%m-%d %H:%M:%S} UTC{kept}{' (dry run)' if args.dry_run else ''}")
    outcome = sessions_prune(before=before, keep_labelled=args.keep_labelled, dry_run=args.dry_run, report=print)
    done = "would delete" if args.dry_run else "deleted"
    labelled = f"; kept {outcome.kept_labelled} labelled" if args.keep_labelled else ""
    print(
        f"{done} {outcome.sessions} sessions in all: {outcome.events:,} events,"
        f" {outcome.raw_uploads} raw uploads ({outcome.raw_bytes:,} bytes){labelled}"
    )
    return 0
