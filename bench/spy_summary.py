"""Sum py-spy's collapsed stacks (`live_load.py --py-spy DIR`, or `py-spy
record --format raw --threads`) by thread and function: where the sampled
processes spent their running time.

    .venv/bin/python bench/spy_summary.py DIR/*.txt [--top 30]

Per thread name (the event loop is `MainThread`, the ingest thread
`live-ingest`): its samples and share of all, then its functions by own
samples (the innermost Python frame: time in C code called from it counts
there) and by inclusive samples (each function once a stack), as shares of
the thread's samples. Line numbers are dropped: a function is its name and
file.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^():]+)(?::\d+)?\)$")


def frame_key(frame: str) -> str:
    """`func (file.py:12)` → `func (file.py)`."""
    match = _FRAME.match(frame)
    return f"{match['name']} ({match['file']})" if match else frame


def read_stacks(paths: list[Path]) -> dict[str, list[tuple[list[str], int]]]:
    """Stacks (root first, line numbers dropped) and their samples, by thread name."""
    threads: dict[str, list[tuple[list[str], int]]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            # the first frame is `thread (ID): NAME` with --threads
            thread = frames[0].split(": ", 1)[1] if frames[0].startswith("thread (") else "?"
            threads.setdefault(thread, []).append(([frame_key(f) for f in frames[1:]], int(count)))
    return threads


def summary(threads: dict[str, list[tuple[list[str], int]]], top: int) -> str:
    total = sum(count for stacks in threads.values() for _, count in stacks)
    lines = [f"{total} samples in all"]
    for thread, stacks in sorted(threads.items(), key=lambda item: -sum(c for _, c in item[1])):
        samples = sum(count for _, count in stacks)
        own, inclusive = Counter(), Counter()
        for frames, count in stacks:
            if frames:
                own[frames[-1]] += count
            for frame in set(frames):
                inclusive[frame] += count
        lines.append(f"\n## {thread}: {samples} samples, {100 * samples / total:.1f} % of all")
        lines.append("own:")
        lines += [f"  {100 * n / samples:5.1f} %  {frame}" for frame, n in own.most_common(top)]
        lines.append("inclusive:")
        lines += [f"  {100 * n / samples:5.1f} %  {frame}" for frame, n in inclusive.most_common(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--top", type=int, default=30, help="functions listed per thread and kind (default 30)")
    args = parser.parse_args(argv)
    print(summary(read_stacks(args.files), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
