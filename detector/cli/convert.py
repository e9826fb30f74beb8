"""`loopguard convert PATH [--format NAME]`: print a transcript's normalised
events as JSON Lines (exit 0), or say what is wrong with it on stderr (exit 2).
PATH `-` reads standard input."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..importers import FORMATS, TranscriptError, parse_bytes, parse_path

HELP = "print a transcript (any supported format) as LoopGuard events, one JSON object per line"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the transcript file (- for standard input)")
    parser.add_argument("--format", default="auto", choices=("auto", *FORMATS), help="its format (default: detect)")


def run(args: argparse.Namespace) -> int:
    try:
        if args.path == "-":
            transcript = parse_bytes(sys.stdin.buffer.read(), "-", args.format)
        else:
            transcript = parse_path(args.path, args.format)
    except TranscriptError as exc:
        print(f"loopguard convert: {exc}", file=sys.stderr)
        return 2
    # built whole before writing, so bad input never leaves half an output
    lines = [json.dumps(event, ensure_ascii=False) + "\n" for event in transcript.events]
    try:
        sys.stdout.writelines(lines)
        sys.stdout.flush()
    except BrokenPipeError:  # `loopguard convert x | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
