"""Detector speed and memory per built-in profile.

For each profile (default, seed000, gemini) and each stream size (10 KB,
100 KB, 1 MB, 10 MB of characters), a stream of real corpus text is fed to
a `Monitor` in 4-character `content`/`reasoning` deltas; each `feed` call is
timed alone. Three streams: `content` and `thinking` (the corpus's normal
content and reasoning rows, concatenated, fed on their channel) and
`looping` (its loop content rows, concatenated); 10 MB on `content` only.
Beside them: a bare loop that only builds the event dicts and appends them
to a list (timed the same way), and a monitor with no detectors (the
monitor's own cost). Three means per row: `mean µs` over the chunks timed
one by one, `loop µs`, the whole loop timed once (total feed time divided by
chunks, with no timer inside), and `CPU µs`, the same loop in the process's
CPU time (on a machine shared with other work the wall clock also counts
the time they take), each with its ratio to the bare loop's.
Peak memory per stream (up to 1 MB) is measured apart with tracemalloc (it
slows the run down, so not while timing), after the stream's text is
already in memory.

Each row runs `--rounds` times (default 3) and shows its fastest round:
the machine's speed varies from minute to minute, slowing whole rounds.

    .venv/bin/python bench/detector_speed.py            # all sizes (about 2 min)
    .venv/bin/python bench/detector_speed.py --quick    # 10 KB and 100 KB only
    .venv/bin/python bench/detector_speed.py --pieces 4 64 1000   # the text in pieces (about 15 s)

`--pieces N ...` prints another table instead: the first 400,000
characters of each stream fed in pieces of N characters to a monitor with
no detector, with `text_loop` alone, with `near_duplicate` alone and with
the default profile, CPU µs per 4 characters (fastest of `--rounds`).
What a 4-character chunk costs beyond the same text in 1,000-character
pieces is the chunks' own cost (the event dicts, the monitor's held path,
the hand-offs); the rest is the detectors' work on the text.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import add_corpus_argument, corpus_files  # noqa: E402
from detector import Monitor  # noqa: E402
from detector.config import Profile, builtin_config  # noqa: E402
from detector.evaluation import read_corpus  # noqa: E402

SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000, "10 MB": 10_000_000}
PROFILES = ("default", "seed000", "gemini")
CHUNK = 4
# Streams up to this size get a memory measurement (tracemalloc is slow): the
# peak staying flat from 10 KB to 1 MB is what shows it bounded.
MEMORY_CHARS = 1_000_000
# Streams longer than this are timed on `content` only, without the
# monitor-only row, to keep the default run within about two minutes.
LONGEST_FOR_ALL = 1_000_000
WARM_UP_CHARS = 100_000
PIECES_CHARS = 400_000  # the pieces table's streams
PIECE_DETECTORS = ("text_loop", "near_duplicate")  # the default profile's detectors that read inside chunks


def corpus_texts(limit: int, paths: list[Path] | None = None) -> dict[str, tuple[str, str]]:
    """The three streams (channel, text), each repeated up to `limit` characters."""
    parts: dict[str, list[str]] = {"content": [], "thinking": [], "looping": []}
    files = corpus_files(paths)
    for row in (row for path in files for row in read_corpus(path)):
        if row.label == "loop" and row.channel == "content":
            parts["looping"].append(row.text)
        elif row.label == "normal" and row.channel == "content":
            parts["content"].append(row.text)
        elif row.label == "normal" and row.channel == "reasoning":
            parts["thinking"].append(row.text)
    streams = {}
    for name, texts in parts.items():
        text = "\n\n".join(texts)
        if not text:
            raise SystemExit(f"no rows for the {name} stream in {', '.join(map(str, files))}")
        channel = "reasoning" if name == "thinking" else "content"
        streams[name] = (channel, (text * (limit // len(text) + 1))[:limit])
    return streams


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


def loop_mean(feed, text: str, channel: str, piece: int = CHUNK) -> tuple[float, float]:
    """µs per `CHUNK` characters of the whole loop timed once (total feed
    time / chunks), the text fed in `piece`-character events, on the wall
    clock and in this process's CPU time (which time the other processes of
    a shared machine take does not count in): no timer inside, so the mean
    carries neither the timer's cost nor its rounding; the loop builds each
    event dict, as a caller does."""
    wall, cpu = time.perf_counter_ns, time.process_time_ns
    start, start_cpu = wall(), cpu()
    for i in range(0, len(text), piece):
        feed({"type": channel, "text": text[i : i + piece]})
    chunks = len(text) / CHUNK
    return (wall() - start) / 1000 / chunks, (cpu() - start_cpu) / 1000 / chunks


def pieces_table(streams: dict[str, tuple[str, str]], sizes: list[int], rounds: int) -> None:
    """CPU µs per `CHUNK` characters with the text fed in pieces of each size,
    to a monitor with no detector, with each text detector of the default
    profile alone, and with the whole profile: what the chunks' own cost is
    (dicts, the monitor's held path, the hand-offs), and what the detectors'
    work on the text is however it comes."""
    default = builtin_config().select("default")
    runners = {"no detector": Profile("none", {})}
    runners.update({name: Profile(name, {name: default.detectors[name]}) for name in PIECE_DETECTORS})
    runners["default"] = default
    print(f"CPU µs per {CHUNK} characters, the first {PIECES_CHARS:,} characters fed in pieces of N characters")
    print(f"{'stream':<8} {'N':>6}  " + " ".join(f"{name:>14}" for name in runners))
    for stream, (channel, text) in streams.items():
        text = text[:PIECES_CHARS]
        for size in sizes:
            cpu = [
                min(loop_mean(Monitor(p).feed, text, channel, size)[1] for _ in range(rounds)) for p in runners.values()
            ]
            print(f"{stream:<8} {size:>6}  " + " ".join(f"{value:>14.2f}" for value in cpu), flush=True)


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


def warm_up(streams: dict[str, tuple[str, str]], profiles: list) -> None:
    """Run every profile over the start of every stream once, untimed: a
    fresh process's first rows otherwise pay for page faults and caches."""
    for channel, text in streams.values():
        for profile in profiles:
            time_chunks(Monitor(profile).feed, text[:WARM_UP_CHARS], channel)


def bare_feed():
    events: list[dict] = []
    return events.append


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 KB and 100 KB streams only")
    parser.add_argument("--rounds", type=int, default=3, help="times each row is run; the fastest counts (default 3)")
    parser.add_argument("--max-chars", type=int, default=max(SIZES.values()), help="longest stream (default 10 MB)")
    parser.add_argument(
        "--pieces",
        type=int,
        nargs="+",
        metavar="N",
        help="instead, the table of the text fed in pieces of N characters",
    )
    add_corpus_argument(parser)
    args = parser.parse_args(argv)
    if args.pieces:
        pieces_table(corpus_texts(PIECES_CHARS, args.corpus), args.pieces, args.rounds)
        return 0
    sizes = {k: v for k, v in SIZES.items() if (not args.quick or v <= 100_000) and v <= args.max_chars}
    streams = corpus_texts(max(sizes.values()), args.corpus)
    runners = {"bare append": None, "monitor only": Profile("none", {})}
    runners.update({name: name for name in PROFILES})
    header = (
        f"{'stream':<8} {'size':>6}  {'profile':<13} {'median µs':>9} {'slowest':>8} {'mean µs':>8} {'MB/s':>7}"
        f" {'× bare':>7} {'loop µs':>8} {'loop max':>8} {'× bare':>7} {'CPU µs':>8} {'× bare':>7} {'peak KB':>8}"
    )
    warm_up(streams, [p for p in runners.values() if p is not None])
    print(header)
    print("-" * len(header))
    for stream, (channel, full_text) in streams.items():
        for size_name, size in sizes.items():
            if size > LONGEST_FOR_ALL and stream != "content":
                continue  # keeps the default run short: the content stream covers 10 MB
            text = full_text[:size]
            bare_median = bare_loop = bare_cpu = None
            for name, profile in runners.items():
                if size > LONGEST_FOR_ALL and name == "monitor only":
                    continue
                feed = bare_feed if profile is None else lambda p=profile: Monitor(p).feed
                median, costs, slowest = float("inf"), [], 0.0
                loop, loop_max, loop_cpu = float("inf"), 0.0, float("inf")
                for _ in range(args.rounds):
                    round_loop, round_cpu = loop_mean(feed(), text, channel)
                    loop, loop_max = min(loop, round_loop), max(loop_max, round_loop)
                    loop_cpu = min(loop_cpu, round_cpu)
                    round_costs = time_chunks(feed(), text, channel)
                    round_median = statistics.median(round_costs) / 1000
                    slowest = max(slowest, round_median)
                    if round_median < median:
                        median, costs = round_median, round_costs
                peak = None
                if profile is not None and size <= MEMORY_CHARS:
                    peak = peak_memory(lambda p=profile: Monitor(p), text, channel)
                mean = statistics.fmean(costs) / 1000
                bare_median = bare_median or median
                bare_loop = bare_loop or loop
                bare_cpu = bare_cpu or loop_cpu
                mb_per_s = len(text) / (sum(costs) / 1e9) / 1e6
                peak_text = "-" if peak is None else f"{peak / 1024:,.0f}"
                print(
                    f"{stream:<8} {size_name:>6}  {name:<13} {median:>9.2f} {slowest:>8.2f} {mean:>8.2f}"
                    f" {mb_per_s:>7.2f} {median / bare_median:>7.1f} {loop:>8.2f} {loop_max:>8.2f}"
                    f" {loop / bare_loop:>7.1f} {loop_cpu:>8.2f} {loop_cpu / bare_cpu:>7.1f} {peak_text:>8}",
                    flush=True,
                )
            print()
    print(
        f"µs per {CHUNK}-character chunk, each feed timed alone (the timer's own cost is in every row);"
        f" each row run {args.rounds} times with a fresh monitor, the round with the lowest median shown"
        " (median, mean, MB/s), `slowest`: the highest round median (the machine's speed varies,"
        " slowing whole rounds); MB/s: million characters per second of feed time; `loop µs`: the whole loop"
        " (building each event dict and feeding it) timed once, divided by the chunks, fastest round, `loop max`"
        " its slowest round, `× bare` beside it against the bare loop's (which builds the dicts and appends them)"
        " in the same run; `CPU µs`: the same loop in this process's CPU time (fastest round; on a shared"
        " machine the wall clock also counts the time other processes take), `× bare` against the bare loop's;"
        " peak KB: tracemalloc's peak"
        f" while a fresh monitor reads the stream, measured up to {MEMORY_CHARS:,} characters (tracemalloc is slow)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
