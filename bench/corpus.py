"""The data the benchmarks read: by default the copies inside the repository
(the labelled corpus, gzip-compressed, in fixtures/corpus; the format samples
in fixtures/formats); `--corpus FILE ...` names other corpus files."""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = ROOT / "fixtures" / "corpus"
FORMATS_DIR = ROOT / "fixtures" / "formats"


def add_corpus_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        nargs="+",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"labelled corpus files, *.jsonl or *.jsonl.gz (default: every file in {CORPUS_DIR.relative_to(ROOT)})",
    )


def corpus_files(paths: list[Path] | None = None) -> list[Path]:
    """`paths` when given, else the repository's corpus files."""
    files = paths or sorted(CORPUS_DIR.glob("*.jsonl*"))
    if not files:
        raise SystemExit(f"no corpus files in {CORPUS_DIR}")
    return files


def corpus_name(path: Path) -> str:
    """The file's name without `.gz`: the corpus file it is a copy of."""
    return path.name.removesuffix(".gz")
