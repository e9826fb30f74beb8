"""A fresh clone needs nothing beside it: no tracked file refers to the
development machines' shared folder (the data the tests, the demo and the
benchmarks read is under fixtures/)."""

from __future__ import annotations

import subprocess

from tests.shared_paths import REPO_ROOT

# Spelt in pieces so this file does not name what it looks for.
OUTSIDE = ("../" + "shared", "/work/" + "shared")


def test_no_tracked_file_refers_to_the_shared_folder():
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True, timeout=60)
        .stdout.decode()
        .split("\0")
    )
    found = []
    for name in filter(None, tracked):
        path = REPO_ROOT / name
        if path.suffix == ".gz" or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {needle}" for needle in OUTSIDE if needle in text]
    assert found == []
