"""Tuning time for labelled sessions: `detector.tuning.tune` (the search on
every session, then k-fold cross-validation) from the `default` profile,
as `loopguard tune` and the lab's tuning jobs run it.

The sessions are generated (seeded), half agent runs and half text, each
half loop and clean, over four models:

- text: prose of varied sentences (1,000-3,000 characters); a loop row
  continues with one sentence or a numbered line repeated (10-40 copies);
- tools: an agent making 8-30 distinct calls; a loop row then repeats one
  call 6-15 times in a row; a third of the clean agents repeat a search
  three times (the false positive tool_dedup's threshold decides).

Prints one table: sessions, events, candidates scored (all k+1 searches),
wall and CPU seconds (the machine may be shared: CPU seconds are the
work), milliseconds of wall time per candidate, peak RSS, the verdict and the
parameters changed; then the base and tuned figures.

    .venv/bin/python bench/tuning.py                      # 500 sessions, 5 folds
    .venv/bin/python bench/tuning.py --quick              # 100 sessions
    .venv/bin/python bench/tuning.py --sessions 100 200 500 --folds 5
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detector.config import get_profile  # noqa: E402
from detector.evaluation import CorpusRow  # noqa: E402
from detector.tuning import stream_from_row, tune  # noqa: E402

MODELS = ("qwen3-8b", "qwen3-32b", "llama-3-8b", "gpt-4o")
WORDS = (
    "the model reads each file and checks the tests before it writes a patch for the failing case while "
    "reviewers compare outputs across runs so that thresholds match what people expect from a careful agent "
    "which plans its steps explains its reasoning and stops once the answer is complete and verified"
).split()


def sentence(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(6, 14))
    return " ".join(words).capitalize() + ". "


def text_row(rng: random.Random, index: int, loop: bool, model: str) -> CorpusRow:
    prose = ""
    target = rng.randint(1000, 3000)
    while len(prose) < target:
        prose += sentence(rng)
    start = None
    if loop:
        start = len(prose)
        if rng.random() < 0.5:
            prose += sentence(rng) * rng.randint(10, 40)
        else:
            item = " ".join(rng.sample(WORDS, 3))
            prose += "".join(f"{n}. {item}\n" for n in range(1, rng.randint(10, 40)))
    channel = rng.choice(("reasoning", "content"))
    return CorpusRow(f"text-{index}", "loop" if loop else "normal", channel, model, prose, start, "", "bench", index)


def tool_row(rng: random.Random, index: int, loop: bool, model: str) -> CorpusRow:
    calls = [{"name": rng.choice(("read_file", "search", "run_tests")), "args": {"arg": f"v{i}"}}
             for i in range(rng.randint(8, 30))]  # fmt: skip
    if not loop and rng.random() < 1 / 3:
        for position in sorted(rng.sample(range(len(calls)), 3)):
            calls.insert(position, {"name": "search", "args": {"q": "same question"}})
    lines = [json.dumps(call) for call in calls]
    start = None
    if loop:
        start = sum(len(line) + 1 for line in lines)
        lines += [json.dumps({"name": "read_file", "args": {"path": "main.py"}})] * rng.randint(6, 15)
    label = "loop" if loop else "normal"
    return CorpusRow(f"tools-{index}", label, "tool_calls", model, "\n".join(lines), start, "", "bench", index)


def generate(count: int, seed: int) -> list[CorpusRow]:
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        make = text_row if index % 2 else tool_row
        rows.append(make(rng, index, loop=index % 4 in (0, 1), model=MODELS[index % len(MODELS)]))
    return rows


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[500])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--max-evaluations", type=int, default=600)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--quick", action="store_true", help="100 sessions")
    args = parser.parse_args()
    if args.quick:
        args.sessions = [100]
    header = (
        f"{'sessions':>8} {'events':>9} {'folds':>5} {'candidates':>10} {'seconds':>8} {'CPU s':>7}"
        f" {'ms/cand':>8} {'peak RSS MB':>11}  verdict, changes"
    )
    print(header)
    for count in args.sessions:
        streams = [stream_from_row(row) for row in generate(count, args.seed)]
        events = sum(len(s.events) for s in streams)
        started, cpu = time.perf_counter(), time.process_time()
        result = tune(streams, get_profile("default"), folds=args.folds, max_evaluations=args.max_evaluations)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        changes = ", ".join(f"{c['detector']}.{c['param']} {c['before']}->{c['after']}" for c in result.changes)
        print(
            f"{count:>8} {events:>9,} {args.folds:>5} {result.evaluations:>10} {seconds:>8.1f} {cpu:>7.1f}"
            f" {1000 * seconds / max(result.evaluations, 1):>8.1f}"
            f" {peak_rss_mb():>11.0f}  {result.verdict}; {changes or 'none'}"
        )
        for name, row in (("base", result.before), ("tuned in-sample", result.after)):
            print(f"{'':>10}{name}: precision {row['precision']:.3f} recall {row['recall']:.3f}"
                  f" clean flagged {row['false_positives']}/{row['normals']}")  # fmt: skip
        if result.held_out:
            row = result.held_out["after"]
            print(f"{'':>10}tuned held-out: precision {row['precision']:.3f} recall {row['recall']:.3f}"
                  f" clean flagged {row['false_positives']}/{row['normals']}")  # fmt: skip


if __name__ == "__main__":
    main()
