"""`loopguard import PATH... [--format NAME] [--title T] [--tag T] [--user NAME] [--project P]`:
bulk-load transcripts into a project (default: "default") of the lab's database.

Directories are walked recursively (hidden files and folders skipped), zips
are expanded, and every file gets its own outcome line on stdout:
``imported PATH: session N, E events, format F`` or ``error PATH: line L: ...``.
The work is the upload page's and the API's: `sessions_import_upload`,
which has each stored session scanned with its model's profile by the lab's
workers; in the embedded mode (no Redis, so no worker to send them to) the
command runs those scans itself before it exits.

Exit status: 0 every file imported, 1 some failed, 2 usage (no files found,
an unknown user or project, a bad tag).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from detector.importers import FORMATS
from loopguard_site.accounts.constants import DEFAULT_PROJECT

NAME = "import"  # a Python keyword, so not the module's name
HELP = "import transcript files, directories or zips into the lab (one outcome line per file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="transcript files, directories (recursed) or zips")
    parser.add_argument("--format", default="auto", choices=("auto", *FORMATS), help="their format (default: detect)")
    parser.add_argument("--title", default="", help="title for every imported session (default: from the file)")
    parser.add_argument("--tag", action="append", default=[], metavar="T", help="tag the sessions (repeatable)")
    parser.add_argument("--user", default=None, metavar="NAME", help="record this user as the uploader")
    parser.add_argument(
        "--project", default=DEFAULT_PROJECT, metavar="NAME", help=f"the sessions' project (default: {DEFAULT_PROJECT})"
    )


def _files(paths: list[str]) -> Iterator[Path]:
    """Each path's files: a file itself, a directory's files at any depth
    (sorted, hidden ones skipped), a missing path as itself (it fails to read)."""
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            yield path
            continue
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(names):
                if not name.startswith("."):
                    yield Path(folder) / name


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from loopguard_site.accounts.selectors import project_named
    from loopguard_site.replay.services import queued_runs_execute_here
    from loopguard_site.transcripts.services import clean_tags, sessions_import_upload

    try:
        tags = clean_tags(args.tag)
    except ValueError as exc:
        print(f"loopguard import: --tag: {exc}", file=sys.stderr)
        return 2
    uploader = None
    if args.user is not None:
        uploader = get_user_model().objects.filter(username=args.user).first()
        if uploader is None:
            print(f"loopguard import: --user: no user {args.user!r}", file=sys.stderr)
            return 2
    project = project_named(args.project)
    if project is None:
        print(f"loopguard import: --project: no project {args.project!r}", file=sys.stderr)
        return 2
    files = list(_files(args.paths))
    if not files:
        print("loopguard import: no files found under " + ", ".join(args.paths), file=sys.stderr)
        return 2
    failed = 0
    imported = []
    for path in files:
        outcomes = sessions_import_upload(
            [_path_upload(path)], fmt=args.format, uploader=uploader, project=project, title=args.title, tags=tags
        )
        for outcome in outcomes:
            print(outcome.line(), flush=True)
            failed += outcome.error is not None
            if outcome.session is not None:
                imported.append(outcome.session.pk)
    if settings.LOOPGUARD_EMBEDDED and imported:
        queued_runs_execute_here(session_ids=imported)
    return 1 if failed else 0


def _path_upload(path: Path):
    from loopguard_site.transcripts.services import Upload

    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # reading it fails too, and the outcome line says why
    return Upload(str(path), size, path.read_bytes)
