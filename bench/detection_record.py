"""Every detection of the built-in profiles on every corpus row, with the
index of the event that returned it: the record that shows a change in how
the detectors compute (speed work) changed nothing they decide, nor when.

Each row is replayed as `loopguard eval` replays it (`row_events`), its text
cut into 4-character chunks and, apart, into chunks of 1, 3, 7, 50 and 200
characters in turn. One JSON line per profile, chunking and row: the row id
and, per detection, the index of the `feed` call that returned it and the
detection's every field.

    .venv/bin/python bench/detection_record.py --out /tmp/after.jsonl
    .venv/bin/python bench/detection_record.py --compare /tmp/before.jsonl /tmp/after.jsonl

To record another version of the code, run its copy of this script
(`git archive BRANCH | tar -x -C DIR`, then `DIR/bench/detection_record.py`):
the script imports the detector package beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import add_corpus_argument, corpus_files  # noqa: E402
from detector import Monitor  # noqa: E402
from detector.config import BUILTIN_PROFILES  # noqa: E402
from detector.evaluation import CorpusRow, read_corpus, row_events  # noqa: E402

MIXED_SIZES = (1, 3, 7, 50, 200)


def mixed_events(row: CorpusRow) -> Iterator[dict]:
    """The row's events with its text in chunks of `MIXED_SIZES` characters in turn."""
    sizes = itertools.cycle(MIXED_SIZES)
    for event in row_events(row, chunk_chars=len(row.text) + 1):
        if event["type"] != row.channel or not event["text"]:
            yield event
            continue
        text, i = event["text"], 0
        while i < len(text):
            size = next(sizes)
            yield {"type": row.channel, "text": text[i : i + size]}
            i += size


CHUNKINGS = {"4": row_events, "mixed": mixed_events}


def record(profile: str, events: Iterator[dict], model: str) -> list:
    """[event index, detection fields] for every detection, in the order returned."""
    monitor = Monitor(profile, model=model)
    return [[index, found.to_dict()] for index, event in enumerate(events) for found in monitor.feed(event)]


def write_record(out: Path, files: list[Path], profiles: list[str]) -> None:
    rows = [row for path in files for row in read_corpus(path)]
    with out.open("w", encoding="utf-8") as handle:
        for profile in profiles:
            for chunking, events in CHUNKINGS.items():
                fired = 0
                for row in rows:
                    found = record(profile, events(row), row.model)
                    fired += bool(found)
                    handle.write(json.dumps([profile, chunking, row.id, found], ensure_ascii=False) + "\n")
                print(f"{profile:<8} {chunking:<6} {len(rows):,} rows, {fired:,} with a detection", flush=True)


def compare(before: Path, after: Path) -> int:
    """Print the rows whose detections differ; the number of them."""

    def lines(path: Path) -> dict:
        with path.open(encoding="utf-8") as handle:
            return {tuple(entry[:3]): entry[3] for entry in map(json.loads, handle)}

    old, new = lines(before), lines(after)
    if old.keys() != new.keys():
        print(f"the records cover different rows: {len(old.keys() ^ new.keys()):,} in one only")
        return len(old.keys() ^ new.keys())
    differ = [key for key in old if old[key] != new[key]]
    for key in differ[:20]:
        print("differs:", *key)
    groups = sorted({key[:2] for key in old})
    for group in groups:
        keys = [key for key in old if key[:2] == group]
        print(
            f"{group[0]:<8} {group[1]:<6} {len(keys):,} rows,"
            f" {sum(bool(old[k]) for k in keys):,} with a detection"
            f" ({sum(len(old[k]) for k in keys):,} detections), {sum(old[k] != new[k] for k in keys)} differ"
        )
    print(f"{len(differ)} of {len(old):,} rows differ")
    return len(differ)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the record here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two records")
    parser.add_argument("--profiles", nargs="+", default=sorted(BUILTIN_PROFILES), help="profiles (default: all)")
    add_corpus_argument(parser)
    args = parser.parse_args(argv)
    if args.compare:
        return 1 if compare(*args.compare) else 0
    if not args.out:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    write_record(args.out, corpus_files(args.corpus), args.profiles)
    return 0


if __name__ == "__main__":
    sys.exit(main())
