"""Detector speed and memory per built-in profile.

For each profile (default, seed000, gemini) and each stream size (10 KB,
100 KB, 1 MB, 10 MB of characters), a stream of real corpus text is fed to
a `Monitor` in 4-character `content`/`reasoning` deltas; each `feed` call is
timed alone. Three streams: `content` and `thinking` (the corpus's normal
content and reasoning rows, concatenated, fed on their channel) and
`looping` (its loop content rows, concatenated). Beside them: a bare loop that
only appends the same chunks to a list (timed the same way), and a monitor
with no detectors (the monitor's own cost). Peak memory per stream is
measured apart with tracemalloc (it slows the run down, so not while
timing), after the stream's text is already in memory.

    .venv/bin/python bench/detector_speed.py            # all sizes (about 2-3 min)
    .venv/bin/python bench/detector_speed.py --quick    # 10 KB and 100 KB only
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detector import Monitor  # noqa: E402
from detector.config import Profile  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000, "10 MB": 10_000_000}
PROFILES = ("default", "seed000", "gemini")
CHUNK = 4
# Memory is measured on at most this many characters of a stream beyond 1 MB
# (tracemalloc is slow); a bounded detector's peak does not grow past it.
MEMORY_CHARS = 1_000_000


def corpus_text(label: str, channel: str, limit: int) -> str:
    """Text of the corpus rows with `label` on `channel`, joined, repeated up to `limit` characters."""
    parts: list[str] = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["label"] == label and row["channel"] == channel:
                    parts.append(row["text"])
    text = "\n\n".join(parts)
    if not text:
        raise SystemExit(f"no {label} {channel} rows in {CORPUS}")
    return (text * (limit // len(text) + 1))[:limit]


def time_chunks(feed, text: str, channel: str) -> list[int]:
    """Nanoseconds of each `feed(event)` call over the stream."""
    clock = time.perf_counter_ns
    costs = []
    record = costs.append
    for i in range(0, len(text), CHUNK):
        event = {"type": channel, "text": text[i : i + CHUNK]}
        start = clock()
        feed(event)
        record(clock() - start)
    return costs


def peak_memory(make_monitor, text: str, channel: str) -> int:
    """Peak bytes allocated while a fresh monitor reads `text`."""
    gc.collect()
    tracemalloc.start()
    monitor = make_monitor()
    for i in range(0, len(text), CHUNK):
        monitor.feed({"type": channel, "text": text[i : i + CHUNK]})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def bare_feed():
    chunks: list[str] = []
    append = chunks.append
    return lambda event: append(event["text"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 KB and 100 KB streams only")
    args = parser.parse_args(argv)
    sizes = {k: v for k, v in SIZES.items() if not args.quick or v <= 100_000}
    longest = max(sizes.values())
    streams = {
        "content": ("content", corpus_text("normal", "content", longest)),
        "thinking": ("reasoning", corpus_text("normal", "reasoning", longest)),
        "looping": ("content", corpus_text("loop", "content", longest)),
    }
    runners = {"bare append": None, "monitor only": Profile("none", {})}
    runners.update({name: name for name in PROFILES})
    header = (
        f"{'stream':<8} {'size':>6}  {'profile':<13} {'median µs':>9} {'mean µs':>8} {'MB/s':>7}"
        f" {'× bare':>7} {'peak KB':>8}"
    )
    print(header)
    print("-" * len(header))
    for stream, (channel, full_text) in streams.items():
        for size_name, size in sizes.items():
            text = full_text[:size]
            bare_median = None
            for name, profile in runners.items():
                if profile is None:
                    costs = time_chunks(bare_feed(), text, channel)
                    peak = None
                else:
                    costs = time_chunks(Monitor(profile).feed, text, channel)
                    peak = peak_memory(lambda p=profile: Monitor(p), text[:MEMORY_CHARS], channel)
                median = statistics.median(costs) / 1000
                mean = statistics.fmean(costs) / 1000
                bare_median = bare_median or median
                mb_per_s = len(text) / (sum(costs) / 1e9) / 1e6
                peak_text = "-" if peak is None else f"{peak / 1024:,.0f}"
                print(
                    f"{stream:<8} {size_name:>6}  {name:<13} {median:>9.2f} {mean:>8.2f} {mb_per_s:>7.2f}"
                    f" {median / bare_median:>7.1f} {peak_text:>8}"
                )
            print()
    print(
        f"µs per {CHUNK}-character chunk (each feed timed alone, timer cost included in every row); "
        f"MB/s = million characters per second of feed time; peak KB over the first "
        f"{MEMORY_CHARS:,} characters of the stream (tracemalloc)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
