"""The block check skips the periods that cannot complete (`text_blocks`,
`BlockCycleFinder._may_complete`): a log's or a table's every row brings
each multiple of its one-row cycle, and judging each in full costs O(p)
a period. Skipping changes no answer (against a finder that judges every
period in full) and leaves a few full judgements a row."""

from __future__ import annotations

import random

import pytest

from detector import text_blocks
from tests.detector.test_default_profile import DEFAULT_TEXT_LOOP


class JudgingEveryPeriod(text_blocks.BlockCycleFinder):
    """The oracle: every live period judged in full."""

    __slots__ = ()

    def _may_complete(self, p: int, q: int) -> bool:
        return True


def regions(finder: text_blocks.BlockCycleFinder, text: str) -> list[tuple]:
    found, offset = [], 0
    for i in range(0, len(text), 4):
        found += finder.feed(text[i : i + 4], offset + i)
    found += finder.flush(len(text))
    return [(r.kind, r.start, r.end, r.at, r.unit, r.repeats, r.blocks) for r in found]


def epochs(rng: random.Random, rows: int, first: int = 1) -> str:
    return "".join(
        f"Epoch {i}/500 - loss: {rng.uniform(0, 2):.4f} - acc: {rng.uniform(0, 1):.4f}\n"
        for i in range(first, first + rows)
    )


def readings(rng: random.Random, rows: int) -> str:
    return "".join(
        f"{rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.1f}\n" for _ in range(rows)
    )


def _texts() -> dict[str, str]:
    rng = random.Random(5)
    block = readings(rng, 3)
    return {
        "a training log": epochs(rng, 400),
        "a log, then two rows counting together": epochs(rng, 150)
        + "".join(f"Epoch {150 + i}/500 - loss: 0.{40 + i}00 - acc: 0.{50 + i}00\n" for i in range(45)),
        "a log, then two rows said again word for word": epochs(rng, 150) + epochs(random.Random(1), 2, 151) * 20,
        "readings, then three rows said again": readings(rng, 200) + block * 15 + readings(rng, 20),
        "stores a day": "".join(
            f"Day {d}, store {s}: {rng.randint(10, 99)} sales\n" for d in range(1, 90) for s in (1, 2, 3)
        ),
        "a count in pairs of rows": "".join(f"Item {n}: pending\nItem {n + 1}: done\n" for n in range(1, 200, 2)),
    }


@pytest.mark.parametrize("name", sorted(_texts()))
def test_skipping_periods_changes_no_answer(name):
    text = _texts()[name]
    expected = regions(JudgingEveryPeriod(DEFAULT_TEXT_LOOP), text)
    assert regions(text_blocks.BlockCycleFinder(DEFAULT_TEXT_LOOP), text) == expected


def test_the_texts_hold_loops_to_find():
    # The comparison above must see loops found, not only quiet logs.
    found = {name: regions(JudgingEveryPeriod(DEFAULT_TEXT_LOOP), text) for name, text in _texts().items()}
    assert [name for name, regions in found.items() if regions] == [
        "a log, then two rows counting together",
        "a log, then two rows said again word for word",
        "readings, then three rows said again",
        "a count in pairs of rows",
    ]


def test_a_training_logs_row_is_judged_in_full_for_few_periods(monkeypatch):
    # Each row is three blocks, a one-row cycle of three; its 20 multiples up
    # to 64 blocks are live at every block. Judged in full (`_blocks_covering`
    # is called once a full judgement), they cost 20 a block; skipped where a
    # random figure of the newest row breaks them, for as many blocks as the
    # break stays in their runs: a few.
    calls = 0
    real = text_blocks._blocks_covering

    def counting(*args):
        nonlocal calls
        calls += 1
        return real(*args)

    monkeypatch.setattr(text_blocks, "_blocks_covering", counting)
    log = epochs(random.Random(9), 1000)
    assert regions(text_blocks.BlockCycleFinder(DEFAULT_TEXT_LOOP), log) == []
    full, calls = calls, 0
    assert regions(JudgingEveryPeriod(DEFAULT_TEXT_LOOP), log) == []
    assert calls > 15 * 3 * 1000  # the oracle: about 20 a block
    assert full < 2 * 3 * 1000
