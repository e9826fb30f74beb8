"""Accuracy of the built-in profiles on every file of fixtures/corpus (or the --corpus files), as one table.

`loopguard eval`'s scoring (detector/evaluation.py) over the rows of all corpus
files together, for the profiles default, seed000 and gemini, and for the
tool detectors alone (default's detectors minus the text ones, on the
tool_calls rows). Per profile: all text rows, then each row channel.
Recall, false-positive rate, median and 90th-percentile delay (characters
for text rows, tool calls for tool_calls rows), as `loopguard eval` defines them.

    .venv/bin/python bench/accuracy.py            # every row (several minutes on a loaded 2-core machine)
    .venv/bin/python bench/accuracy.py --quick    # real_small.jsonl and every 10th row of the other files

`--by-type`: the default profile's loop rows by the detection type that
first catches each ("early" for a hit before `loop_start`, "missed"): rows,
median and mean delay; and the ids of the false alarms.

Then issue 19's synthetic classes (tests/detector/synthetic.py; `--synthetic N`
cases each, 0 for none): per loop class the cases caught from their start,
those with an alarm before it, and the delays; per quiet class the false alarms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import add_corpus_argument, corpus_files, corpus_name  # noqa: E402
from detector import Monitor  # noqa: E402
from detector.config import Profile, builtin_config  # noqa: E402
from detector.evaluation import (  # noqa: E402
    CorpusRow,
    Score,
    loop_start_position,
    percentile,
    read_corpus,
    run_row,
    score_rows,
)

PROFILES = ("default", "seed000", "gemini")
# Detectors that read text channels; the rest of `default` are the tool detectors.
TEXT_DETECTORS = ("text_loop", "near_duplicate", "content_chanting", "reasoning_checkpoint")
QUICK_FULL_FILE = "real_small.jsonl"
QUICK_STRIDE = 10


def corpus_rows(quick: bool, paths: list[Path] | None = None) -> tuple[list[CorpusRow], list[str]]:
    rows: list[CorpusRow] = []
    names = []
    for path in corpus_files(paths):
        file_rows = read_corpus(path)
        if quick and corpus_name(path) != QUICK_FULL_FILE:
            file_rows = file_rows[::QUICK_STRIDE]
        rows += file_rows
        names.append(f"{corpus_name(path)} ({len(file_rows):,} rows)")
    return rows, names


def tool_profile() -> Profile:
    default = builtin_config().select("default")
    tools = {name: params for name, params in default.detectors.items() if name not in TEXT_DETECTORS}
    return Profile("tool detectors", tools)


def _fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def table_row(profile: str, rows: str, score: Score) -> str:
    return (
        f"| {profile} | {rows} | {score.hits}/{score.loops} | {_fmt(score.recall, '.3f')}"
        f" | {score.false_alarms}/{score.normals} | {_fmt(score.false_positive_rate, '.2%')}"
        f" | {_fmt(percentile(score.delays, 0.5), ',.0f')}"
        f" | {_fmt(statistics.fmean(score.delays) if score.delays else None, ',.0f')}"
        f" | {_fmt(percentile(score.delays, 0.9), ',.0f')} |"
    )


def first_type(result) -> str:
    """The type of the detection that first catches a loop row."""
    if result.hit_at is None:
        return "missed"
    if result.early_hit:
        return "early"
    start = loop_start_position(result.row)
    return min((d for d in result.detections if d.at >= start), key=lambda d: d.at).type


def by_type_table(rows: list[CorpusRow]) -> None:
    """The default profile's loop rows by the type that first catches them."""
    profile = builtin_config().select("default")
    groups: dict[str, list[int | None]] = {}
    alarms = []
    for row in rows:
        result = run_row(row, profile)
        if row.label == "normal":
            alarms += [row.id] if result.detections else []
            continue
        delay = result.delay if row.channel != "tool_calls" else None
        groups.setdefault(first_type(result), []).append(delay)
    print("\ndefault profile, loop rows by the type that first catches them (delay in characters)")
    print("| first type | rows | median delay | mean delay |")
    print("|---|---|---|---|")
    for kind in sorted(groups, key=lambda k: (k == "missed", -len(groups[k]), k)):
        delays = [d for d in groups[kind] if d is not None]
        mean = f"{statistics.fmean(delays):,.0f}" if delays else "-"
        print(f"| {kind} | {len(groups[kind])} | {_fmt(percentile(delays, 0.5), ',.0f')} | {mean} |")
    print("false alarms: " + (", ".join(alarms) or "none"))


def synthetic_table(count: int) -> None:
    """Issue 19's classes (tests/detector/synthetic.py), `count` cases each, default profile."""
    from tests.detector.synthetic import LOOP_CLASSES, QUIET_CLASSES, cases

    print(f"\nsynthetic classes, default profile, {count} cases each")
    print("| class | caught | early alarms | median delay | mean delay | false alarms |")
    print("|---|---|---|---|---|---|")
    for name, generator in {**LOOP_CLASSES, **QUIET_CLASSES}.items():
        hits, early, delays, alarms = 0, 0, [], 0
        for case in cases(generator, count, name):
            monitor = Monitor("default")
            found = monitor.feed({"type": "turn"})
            for i in range(0, len(case.text), 4):
                found += monitor.feed({"type": case.channel, "text": case.text[i : i + 4]})
            found += monitor.feed({"type": "finish"})
            if case.loop_start is None:
                alarms += bool(found)
                continue
            early += any(d.at < case.loop_start for d in found)
            ats = [d.at for d in found if d.at >= case.loop_start]
            if ats:
                hits += 1
                delays.append(min(ats) - case.loop_start)
        if name in LOOP_CLASSES:
            mean = f"{statistics.fmean(delays):,.0f}" if delays else "-"
            median = _fmt(percentile(delays, 0.5), ",.0f")
            print(f"| {name} | {hits}/{count} | {early} | {median} | {mean} | - |")
        else:
            print(f"| {name} | - | - | - | - | {alarms}/{count} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_FULL_FILE} and every {QUICK_STRIDE}th other row")
    add_corpus_argument(parser)
    parser.add_argument("--synthetic", type=int, default=40, help="cases per synthetic class (0: none; default 40)")
    parser.add_argument(
        "--by-type", action="store_true", help="default's loop rows by the type that first catches them"
    )
    args = parser.parse_args(argv)
    rows, names = corpus_rows(args.quick, args.corpus)
    tool_rows = [row for row in rows if row.channel == "tool_calls"]
    config = builtin_config()
    runs = [(name, config.select(name), rows) for name in PROFILES] + [("tool detectors", tool_profile(), tool_rows)]
    print("corpus: " + ", ".join(names))
    print(
        "| profile | rows | hits/loops | recall | fp/normals | fp rate | median delay | mean delay | p90 delay"
        " | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, profile, profile_rows in runs:
        start = time.perf_counter()
        score = score_rows("corpus", profile_rows, profile)
        seconds = time.perf_counter() - start
        groups = [] if name == "tool detectors" else [("all rows", score.overall)]
        groups += list(score.channels.items())
        for group, part in groups:
            print(f"{table_row(name, group, part)} {seconds:.0f} |", flush=True)
    if args.by_type:
        by_type_table(rows)
    if args.synthetic:
        synthetic_table(args.synthetic)
    print(
        "\ndelay: characters from loop_start to the first detection at or after it (tool_calls rows: tool calls);"
        " 'all rows' delays are over text rows only; seconds: the profile's scoring time over all its rows."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
