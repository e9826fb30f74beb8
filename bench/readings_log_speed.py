"""CPU time of the default profile on logs and tables of numbers.

A log of readings ("12.31 44.02 17.9" a line, every number new) is a
one-line cycle of masked keys that never stops and whose numbers never
count: every row brings every multiple of that cycle, up to
`block_max_period` rows, to the block check (`text_blocks`). So do a
training log ("Epoch 12/500 - loss: 0.4127 - acc: 0.8810", three blocks a
row) and a table whose rows say their labels again ("Day 4, store 2: 57
sales"). Each log, seeded, is fed to a `Monitor` in 4-character `content`
deltas, each `feed` timed alone in the process's CPU time (the machine is
shared).

    .venv/bin/python bench/readings_log_speed.py              # 100 KB each, seed 1
    .venv/bin/python bench/readings_log_speed.py --chars 10000 --logs readings

The script imports the detector package beside it: run another version's
copy of it to measure that version.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detector import Monitor  # noqa: E402

CHUNK = 4


def _first_chars(lines: Iterator[str], chars: int) -> str:
    """The first `chars` characters of the lines."""
    taken, length = [], 0
    for line in lines:
        if length >= chars:
            break
        taken.append(line)
        length += len(line)
    return "".join(taken)[:chars]


def readings_log(chars: int, seed: int) -> str:
    """Lines of three readings with two decimals or one, `chars` characters in all."""
    rng = random.Random(seed)
    lines = iter(lambda: f"{rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.1f}\n", None)
    return _first_chars(lines, chars)


def training_log(chars: int, seed: int) -> str:
    """A training log's lines, an epoch a line, `chars` characters in all."""
    rng = random.Random(seed)
    lines = (
        f"Epoch {epoch}/5000 - loss: {rng.uniform(0, 2):.4f} - acc: {rng.uniform(0, 1):.4f}\n"
        for epoch in itertools.count(1)
    )
    return _first_chars(lines, chars)


def sales_table(chars: int, seed: int) -> str:
    """Three stores' sales a day, a row each, `chars` characters in all."""
    rng = random.Random(seed)
    lines = (
        f"Day {day}, store {store}: {rng.randint(10, 99)} sales\n" for day in itertools.count(1) for store in (1, 2, 3)
    )
    return _first_chars(lines, chars)


LOGS = {"readings": readings_log, "training": training_log, "sales": sales_table}


def chunk_cpu_ns(profile: str, text: str) -> tuple[list[int], int]:
    """CPU nanoseconds of each `feed` call, and the detections returned."""
    clock = time.process_time_ns
    monitor = Monitor(profile)
    costs, found = [], 0
    for i in range(0, len(text), CHUNK):
        event = {"type": "content", "text": text[i : i + CHUNK]}
        start = clock()
        found += len(monitor.feed(event))
        costs.append(clock() - start)
    return costs, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000, help="length of the log (default 100,000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the readings (default 1)")
    parser.add_argument("--profile", default="default", help="built-in profile (default: default)")
    parser.add_argument(
        "--logs", nargs="+", choices=sorted(LOGS), default=list(LOGS), help="logs to feed (default: all)"
    )
    args = parser.parse_args(argv)
    print(f"{'log':<9} {'profile':<9} {'chars':>8} {'chunks':>7}", end="")
    print(f" {'mean µs':>8} {'median µs':>9} {'max µs':>8} {'found':>5}")
    for name in args.logs:
        text = LOGS[name](args.chars, args.seed)
        costs, found = chunk_cpu_ns(args.profile, text)
        micros = [cost / 1000 for cost in costs]
        print(
            f"{name:<9} {args.profile:<9} {len(text):>8,} {len(costs):>7,} {statistics.fmean(micros):>8.2f}"
            f" {statistics.median(micros):>9.2f} {max(micros):>8.1f} {found:>5}"
        )
    print(f"CPU µs per {CHUNK}-character chunk (time.process_time_ns around each feed), seed {args.seed}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
