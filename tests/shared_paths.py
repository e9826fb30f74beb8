"""Where the tests' data lives: inside the repository, under `fixtures/`
(the labelled corpus gzip-compressed in `fixtures/corpus/`, the format
samples in `fixtures/formats/`), so a fresh clone's suite needs nothing
beside it. The only place tests find this data; the names are those of
the days it lived outside the repository."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT / "fixtures"
FORMATS_DIR = SHARED_DIR / "formats"
CORPUS_DIR = SHARED_DIR / "corpus"
# Compressed corpus files, decompressed once per version of their bytes.
_UNPACKED_DIR = Path(tempfile.gettempdir()) / "loopguard-test-data"


def shared_path(*parts: str) -> Path:
    """A path to test data, e.g. ``shared_path("formats", "cline")`` or
    ``shared_path("corpus", "real_small.jsonl")``. A file stored only
    compressed (`NAME.gz`) is given as a decompressed copy in the temporary
    folder, so callers read plain text."""
    path = SHARED_DIR.joinpath(*parts)
    packed = path.with_name(path.name + ".gz")
    if path.exists() or not packed.exists():
        return path
    stat = packed.stat()
    unpacked = _UNPACKED_DIR / f"{stat.st_size}-{stat.st_mtime_ns}" / path.name
    if not unpacked.exists():
        unpacked.parent.mkdir(parents=True, exist_ok=True)
        # Written aside, then renamed: parallel test processes never read half a file.
        fd, partial = tempfile.mkstemp(dir=unpacked.parent, prefix=path.name)
        with os.fdopen(fd, "wb") as out, gzip.open(packed, "rb") as source:
            while block := source.read(1 << 20):
                out.write(block)
        os.replace(partial, unpacked)
    return unpacked
