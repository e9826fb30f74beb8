"""`loopguard scan [--profile NAME | --config FILE] [--format NAME] [--json] PATH|-`

Reads one transcript in any format the importers know (`-`: standard
input), runs a profile's detectors over its events and reports the loops:
one line per detection, or with `--json` one object per session
(``{"session", "model", "profile", "events", "detections"}``, detections as
in docs/event-format.md).

The profile is `--profile` (from `--config` if given, else the built-in
ones); without it, the first profile of the config whose model globs match
the session's model, else `default`.

Exit status: 0 no loop found, 1 a loop found, 2 bad input or config (the
message on stderr names the file and line, or the config key). Nothing is
printed to stdout unless the whole transcript was scanned.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata

from ..chat_client import judge_client_for
from ..config import Config, Profile, builtin_config, load_config
from ..detection import Detection
from ..events import EventError
from ..importers import FORMATS, Transcript, TranscriptError, parse_bytes, parse_path
from ..monitor import Monitor
from ..params import ConfigError

HELP = "scan a transcript for loops (exit 0: none, 1: loop found, 2: bad input)"
STDIN_NAME = "<stdin>"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="transcript file, or - for standard input")
    parser.add_argument("--profile", default=None, metavar="NAME", help="profile to run (default: by model)")
    parser.add_argument("--config", default=None, metavar="FILE", help="TOML or JSON file of profiles")
    parser.add_argument(
        "--format", default="auto", choices=("auto", *FORMATS), help="transcript format (default: detect it)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per session")


def run(args: argparse.Namespace) -> int:
    try:
        config: Config = load_config(args.config) if args.config else builtin_config()
        transcript = _read(args.path, args.format)
        model = transcript.model or transcript.events[0].get("model") or ""
        profile = config.select(name=args.profile) if args.profile else config.select(model=model)
        detections = scan_events(transcript, profile, model, STDIN_NAME if args.path == "-" else args.path)
    except (ConfigError, TranscriptError) as exc:
        print(f"loopguard scan: {exc}", file=sys.stderr)
        return 2
    session = transcript.events[0].get("id") or (STDIN_NAME if args.path == "-" else args.path)
    if args.json:
        report = {
            "session": session,
            "model": model or None,
            "profile": profile.name,
            "events": len(transcript.events),
            "detections": [d.to_dict() for d in detections],
        }
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_summary(session, model, profile.name, len(transcript.events), detections))
    return 1 if detections else 0


def _read(path: str, fmt: str) -> Transcript:
    if path == "-":
        return parse_bytes(sys.stdin.buffer.read(), STDIN_NAME, fmt)
    return parse_path(path, fmt)


def scan_events(transcript: Transcript, profile: Profile, model: str, file: str) -> list[Detection]:
    """Every detection the profile fires over the transcript's events (read from `file`)."""
    monitor = Monitor(profile, model=model, judge_client=judge_client_for(profile))
    found: list[Detection] = []
    for number, event in enumerate(transcript.events, 1):
        try:
            found.extend(monitor.feed(event))
        except EventError as exc:  # importers validate; this guards a broken one
            raise TranscriptError(f"event {number}: {exc}", file=file, field=exc.field) from None
    return found


def format_summary(session: str, model: str, profile: str, events: int, detections: list[Detection]) -> str:
    """The human report: a header, then one line per detection."""
    verdict = f"{len(detections)} loop{'s' if len(detections) != 1 else ''} found" if detections else "no loop found"
    lines = [f"{_shown(session)}: model {_shown(model) or '-'}, profile {profile}, {events:,} events: {verdict}"]
    for d in detections:
        lines.append(
            f"  {d.channel} {d.start:,}-{d.end:,} at {d.at:,} [{d.detector}/{d.type}] {d.action}: {_shown(d.message)}"
        )
    return "\n".join(lines)


def _shown(text: str) -> str:
    """Transcript text made safe for a terminal: control and format
    characters (escape sequences, bidi overrides, newlines) as escapes."""
    return "".join(
        ch if unicodedata.category(ch) not in ("Cc", "Cf") else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
