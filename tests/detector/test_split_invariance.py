"""The same text fed whole, one character at a time and in random splits
gives the same detections (and checkpoint records), for every built-in
profile, on real corpus rows, loops and normals.

Each row becomes one stream: a turn with the row's text on its own channel,
then a turn with the same text on the other channel, so every profile's
reasoning and content detectors see it. Texts are cut at 5,200 characters:
past seed 000's last checkpoint, and it keeps the one-character runs short.
"""

from __future__ import annotations

import json
import random

import pytest

from detector import Monitor
from detector.config import BUILTIN_PROFILES
from tests.shared_paths import shared_path

CORPUS = shared_path("corpus", "real_small.jsonl")
LIMIT = 5200


def _rows() -> list[dict]:
    with CORPUS.open(encoding="utf-8") as corpus:
        rows = [json.loads(line) for line in corpus]
    return [row for row in rows if row["channel"] in ("reasoning", "content")]


ROWS = _rows()


def _pieces(text: str, split: str, rng: random.Random) -> list[str]:
    if split == "whole":
        return [text]
    if split == "chars":
        return list(text)
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 40)
        pieces.append(text[i : i + n])
        i += n
    return pieces


def _scan(profile: str, row: dict, split: str):
    text = row["text"][:LIMIT]
    other = "content" if row["channel"] == "reasoning" else "reasoning"
    rng = random.Random(row["id"])
    monitor = Monitor(profile, model=row.get("model") or "")
    found = []
    for channel in (row["channel"], other):
        found += monitor.feed({"type": "turn"})
        for piece in _pieces(text, split, rng):
            found += monitor.feed({"type": channel, "text": piece})
        found += monitor.feed({"type": "finish", "reason": "stop"})
    # Two detectors firing in one event come in detector order: compare in firing order.
    return sorted(found, key=lambda d: (d.turn, d.at, d.detector)), monitor.take_checkpoints()


def test_corpus_has_loops_and_normals_on_both_channels():
    kinds = {(row["label"], row["channel"]) for row in ROWS}
    assert kinds == {("loop", "content"), ("loop", "reasoning"), ("normal", "content"), ("normal", "reasoning")}


@pytest.mark.parametrize("profile", sorted(BUILTIN_PROFILES))
@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_same_detections_however_the_text_is_split(profile, row):
    whole = _scan(profile, row, "whole")
    assert _scan(profile, row, "chars") == whole
    assert _scan(profile, row, "random") == whole


def test_the_comparison_sees_detections():
    # guard against a vacuous pass: the profiles do fire on these rows
    fired = {
        profile: sum(bool(_scan(profile, row, "whole")[0]) for row in ROWS if row["label"] == "loop")
        for profile in ("seed000", "gemini")
    }
    assert fired["seed000"] > 0 and fired["gemini"] > 0
