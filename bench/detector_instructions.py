"""Detector cost in instructions per 4-character chunk (callgrind).

CPU time on a shared machine moves by 25-40 % between runs of the same code;
an instruction count with no address randomisation repeats to the
instruction. For each of `bench/detector_speed.py`'s three streams
(`corpus_texts`), the first `--chars` characters (default 100,000) are fed
in 4-character chunks, as that bench's loop does, to: a bare loop (build the
event dict, append it), a monitor with no detectors, and a default-profile
monitor (`--runners` may also name a detector of the default profile: that
detector alone, with its default parameters). Each runs in its own process under `valgrind --tool=callgrind`
(`PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 setarch -R`) twice, with the
stream and with none of it (same start-up, same text read); the table shows
(instructions(chars) - instructions(0)) / chunks.

    .venv/bin/python bench/detector_instructions.py                   # about 10 min
    .venv/bin/python bench/detector_instructions.py --runners default --streams content
    .venv/bin/python bench/detector_instructions.py --runners "no detector" text_loop near_duplicate
    .venv/bin/python bench/detector_instructions.py --source ../main  # another tree's detector

Needs valgrind and setarch (util-linux).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 4
STREAMS = ("content", "thinking", "looping")
RUNNERS = ("bare", "no detector", "default")
COLLECTED = re.compile(r"Collected : (\d+)")


def measured_stream(source: str, streams_file: str, stream: str, runner: str, chars: str):
    """The measured process's feed function, channel and text (the first `chars` characters)."""
    sys.path.insert(0, source)
    from detector import Monitor
    from detector.config import Profile, builtin_config

    channel, text = json.loads(Path(streams_file).read_text())[stream]
    if runner == "bare":
        events: list[dict] = []
        feed = events.append
    elif runner in ("no detector", "default"):
        feed = Monitor(Profile("none", {}) if runner == "no detector" else runner).feed
    else:
        feed = Monitor(Profile(runner, {runner: builtin_config().select("default").detectors[runner]})).feed
    return feed, channel, text[: int(chars)]


def instructions(source: str, streams_file: str, stream: str, runner: str, chars: int) -> int:
    """Instructions of one whole driver process under callgrind."""
    command = [
        "setarch", "-R", "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--feed", source, streams_file, stream, runner, str(chars),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return int(COLLECTED.search(done.stderr).group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000, help="characters fed per stream (default 100,000)")
    parser.add_argument("--streams", nargs="+", choices=STREAMS, default=list(STREAMS))
    parser.add_argument(
        "--runners", nargs="+", default=list(RUNNERS), help=f"{', '.join(RUNNERS)} or a detector of the default profile"
    )
    parser.add_argument("--source", default=str(ROOT), help="tree whose `detector` is measured (default: this one)")
    parser.add_argument("--jobs", type=int, default=1, help="valgrind processes at once (default 1)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bench.detector_speed import corpus_texts

    chunks = -(-args.chars // CHUNK)
    source = str(Path(args.source).resolve())
    with tempfile.NamedTemporaryFile("w", suffix=".json") as streams_file:
        json.dump(corpus_texts(args.chars), streams_file)
        streams_file.flush()
        cells = [(s, r, n) for s in args.streams for r in args.runners for n in (args.chars, 0)]
        with ThreadPoolExecutor(args.jobs) as pool:
            counts = pool.map(lambda cell: instructions(source, streams_file.name, *cell), cells)
            totals = dict(zip(cells, counts, strict=True))
    print(f"instructions per {CHUNK}-character chunk, first {args.chars:,} characters, detector from {source}")
    header = f"{'stream':<9}" + "".join(f" {runner:>12} {'× bare':>7}" for runner in args.runners)
    print(header)
    print("-" * len(header))
    for stream in args.streams:
        per_chunk = {r: (totals[stream, r, args.chars] - totals[stream, r, 0]) / chunks for r in args.runners}
        bare = per_chunk.get("bare")
        row = "".join(
            f" {cost:>12,.0f} {'' if bare is None else f'{cost / bare:.1f}':>7}" for cost in per_chunk.values()
        )
        print(f"{stream:<9}{row}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["--feed"]:
        sys.exit(main())
    # The measured process. Its loop runs at module level, its variables
    # globals, as in the driver of the rounds in BENCHMARKS.md (a loop inside
    # a function, on local variables, costs about 1,000 instructions a chunk
    # less in every row).
    feed, channel, text = measured_stream(*sys.argv[2:])
    for i in range(0, len(text), CHUNK):
        feed({"type": channel, "text": text[i : i + CHUNK]})
