"""A letter-free log of numeric readings in the block check
(`detector.text_blocks`): bounded work per row, and an exact repeated
block of readings still a loop at its `grid_min_rows`-th row."""

from __future__ import annotations

import random

from detector import text_blocks
from tests.detector.test_default_profile import DEFAULT_TEXT_LOOP, detect, summary


def readings(rows: int, seed: int) -> list[str]:
    """`rows` lines of three random readings ("12.31 44.02 17.9\\n")."""
    rng = random.Random(seed)
    return [f"{rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.2f} {rng.uniform(0, 100):.1f}\n" for _ in range(rows)]


class CountingDigits:
    """The block check's digit pattern, counting the `findall` calls that
    read a block's numbers (the counter check's work)."""

    def __init__(self, pattern) -> None:
        self.pattern = pattern
        self.findalls = 0

    def findall(self, text: str) -> list[str]:
        self.findalls += 1
        return self.pattern.findall(text)

    def __getattr__(self, name: str):
        return getattr(self.pattern, name)


def test_a_long_readings_log_reads_a_bounded_number_of_blocks_per_row(monkeypatch):
    # Every row of the log brings each multiple of its one-row cycle, up to
    # `block_max_period` rows, to the counter check: each must read a few
    # blocks (the newest breaks the steps), not its whole window of
    # `counter_min_copies` copies (5 x 64 rows for the longest).
    digits = CountingDigits(text_blocks.DIGITS)
    monkeypatch.setattr(text_blocks, "DIGITS", digits)
    finder = text_blocks.BlockCycleFinder(DEFAULT_TEXT_LOOP)
    offset, per_row = 0, []
    for line in readings(2000, 3):
        before = digits.findalls
        assert finder.feed(line, offset) == []
        per_row.append(digits.findalls - before)
        offset += len(line)
    # A row parses its own numbers and a few rows' before it, once each
    # (`BlockCycleFinder._may_complete` keeps them): not three for each period.
    assert max(per_row) <= DEFAULT_TEXT_LOOP.block_max_period // 4
    # The ring holds 641 blocks: past it the log's length changes nothing.
    assert max(per_row[1000:]) == max(per_row[641:1000])


def test_an_exact_block_of_readings_repeated_is_a_loop_at_its_grid_min_rows_th_row():
    log = "".join(readings(180, 7))
    block = readings(3, 8)
    after = "".join(readings(20, 9))
    rows = block * 12
    (found,) = detect(log + "".join(rows) + after)
    at = len(log) + len("".join(rows[: DEFAULT_TEXT_LOOP.grid_min_rows]))
    # Ten whole copies of 3 rows within the first 32 rows of the run, seen by
    # the character check from the line break before the first row: up to
    # the 32nd row's line break.
    assert summary(found) == ("short_unit", len(log) - 1, at - 1, at - 1, len("".join(block)), 10)
    assert found.unit == "\n" + "".join(block)[:-1]
