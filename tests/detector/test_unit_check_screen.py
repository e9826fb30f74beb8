"""The short-unit check's screen (`repeated_units.ShortUnitFinder._check`):
a candidate period whose tail does not repeat over the least run any unit of
its length needs is dropped before the unit's own need is worked out. It
must never drop a unit that would have been found: each stream here brings
a unit's run to exactly the characters that unit needs at a check, so a
screen asking a single character more would miss it there, and a check
earlier, one unit check short of it, finds nothing."""

from __future__ import annotations

import random

import pytest

from detector.repeated_region import RepeatedRegion
from detector.text_loop import TextLoopParams
from tests.detector.unit_checks import unit_checks

PARAMS = TextLoopParams()
CHECK_AT = 20 * PARAMS.unit_check_every  # the check where each run first holds what it needs

# unit -> characters its run needs (`_required_chars`), each beside the screen's least run:
# min(symbol_region_chars, max(unit_min_copies × p, unit_region_chars)).
UNITS = {
    "ab": 40,  # 20 copies for 20 letters; least 40: the screen's bound is the need itself
    "思考": 40,  # CJK letters count as letters
    "abc ": 40,  # 10 copies of 4 characters
    "abcdefghi ": 40,  # 4 copies, 40 characters: least 40
    "abcdefghijklmno ": 64,  # 4 copies of 16: least 64
    "one by ": 42,  # 6 copies of 7 (40 characters round up to whole copies)
    "abcdefghijklmnopqrstuvwxyzabcde ": 128,  # 4 copies of 32, the longest short unit: least 120
    "-": 120,  # one character: symbol_region_chars; least 40
    "=+": 120,  # no letter
    "&nbsp;": 120,  # markup letters are layout: no letter; least 40
    "</div>": 120,  # so are a bare tag's: nested blocks closed at once
    "<b>ab</b> ": 100,  # 10 copies for 20 letters, the tags' not counted
    "0, 0, 0, 0\n": 352,  # a grid's row: grid_min_rows rows; least 44
    "| | |\n": 192,  # an empty table row: 32 rows of 6
}


def run_to(unit: str, need: int) -> tuple[str, int]:
    """Text whose run of `unit` starts at `CHECK_AT - need`, after letters
    that repeat nothing (none of them in any unit, so the run starts
    exactly there), and goes on past `CHECK_AT`."""
    start = CHECK_AT - need
    prefix = "".join(random.Random(start).choices("KLMNPQRSTVWXYZ", k=start))
    return prefix + unit * (-(-(need + 2 * PARAMS.unit_check_every) // len(unit))), start


def regions(text: str, until: int) -> list[tuple[int, RepeatedRegion]]:
    return unit_checks(PARAMS, text, until)


@pytest.mark.parametrize("unit", list(UNITS))
def test_a_run_that_reaches_its_need_at_a_check_is_found_there(unit: str) -> None:
    need = UNITS[unit]
    text, start = run_to(unit, need)
    assert regions(text, CHECK_AT) == [
        (
            CHECK_AT,
            RepeatedRegion(
                kind="short_unit", start=start, end=CHECK_AT, at=CHECK_AT, unit=unit, repeats=need // len(unit)
            ),
        )
    ]


@pytest.mark.parametrize("unit", list(UNITS))
def test_a_run_one_check_short_of_its_need_is_not_found(unit: str) -> None:
    need = UNITS[unit]
    text, _ = run_to(unit, need)
    assert regions(text, CHECK_AT - PARAMS.unit_check_every) == []
