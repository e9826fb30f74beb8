"""`loopguard replay (SESSION_ID... | --all [--model M] [--format F] [--tag T]) [--profile NAME]... [--project P]`:
replay stored sessions of a project (default: "default") through profiles in this process, without Celery.

Each session is replayed through every profile at once by
`replay_session_profiles`, as a replay job's task does, and its stored
results are replaced. One line per pair on
stdout: ``session N × PROFILE: D detections[, first DETECTOR/TYPE on CHANNEL
at A (loop from S, C after it)]``.

Exit status: 0 no loop found, 1 a loop found, 2 usage (an unknown project,
profile or session, nothing selected) or a session that cannot be replayed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from loopguard_site.accounts.constants import DEFAULT_PROJECT

if TYPE_CHECKING:  # Django loads only inside run()
    from loopguard_site.replay.services import ReplaySummary
HELP = "replay stored sessions through profiles (in this process) and store the results"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sessions", nargs="*", type=int, metavar="SESSION_ID", help="sessions to replay")
    parser.add_argument("--all", action="store_true", help="every stored session (narrowed by the filters)")
    parser.add_argument("--model", default="", help="with --all: sessions of this model")
    parser.add_argument("--format", default="", help="with --all: sessions imported from this format")
    parser.add_argument("--tag", default="", help="with --all: sessions with this tag")
    parser.add_argument(
        "--project", default=DEFAULT_PROJECT, help=f"the sessions' project (default: {DEFAULT_PROJECT})"
    )
    parser.add_argument(
        "--profile", action="append", default=None, metavar="NAME", help="profile (repeatable; default: default)"
    )


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from loopguard_site.accounts.selectors import project_named
    from loopguard_site.errors import FieldError
    from loopguard_site.replay.services import ReplayError, replay_session_profiles, replay_targets
    from loopguard_site.transcripts.models import Session

    project = project_named(args.project)
    if project is None:
        print(f"loopguard replay: --project: no project {args.project!r}", file=sys.stderr)
        return 2

    if args.all == bool(args.sessions):
        print("loopguard replay: give session ids or --all, not both", file=sys.stderr)
        return 2
    session_filter = {key: getattr(args, key) for key in ("model", "format", "tag") if getattr(args, key)}
    try:
        chosen, profiles, _ = replay_targets(
            project_id=project.pk,
            profiles=args.profile or ["default"],
            session_ids=None if args.all else args.sessions,
            all_sessions=args.all,
            session_filter=session_filter if args.all else (session_filter or None),
        )
    except FieldError as exc:
        print(f"loopguard replay: {exc}", file=sys.stderr)
        return 2
    found = False
    for session in Session.objects.filter(pk__in=chosen).order_by("id").iterator():
        outcomes = replay_session_profiles(session=session, runs=[(profile, None) for profile in profiles])
        for profile, outcome in zip(profiles, outcomes, strict=True):
            if isinstance(outcome, ReplayError):
                print(f"loopguard replay: {outcome}", file=sys.stderr)
                return 2
            if isinstance(outcome, Exception):
                raise outcome
            found = found or outcome.detection_count > 0
            print(f"session {session.pk} × {profile}: {summary_line(outcome)}")
    return 1 if found else 0


def summary_line(summary: ReplaySummary) -> str:
    """`D detections`, and the first one with what the loop cost, if any."""
    count = f"{summary.detection_count} detection{'s' if summary.detection_count != 1 else ''}"
    if not summary.detection_count:
        return count
    unit = "tool calls" if summary.first_detection_channel == "tools" else "characters"
    cost = f", {summary.spent_after_loop:,} {unit} after it" if summary.spent_after_loop is not None else ""
    return (
        f"{count}, first {summary.first_detection_detector}/{summary.first_detection_type}"
        f" on {summary.first_detection_channel} at {summary.first_detection_at:,}"
        f" (loop from {summary.first_detection_start:,}{cost})"
    )
