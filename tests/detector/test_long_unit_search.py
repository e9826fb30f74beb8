"""The long-unit search of `repeated_units.ShortUnitFinder._check`: after a
search of the whole long range found the tail's long key nowhere, the next
checks search only the periods that can still fire (a long unit fires with
two whole copies at least, so a longer period would have put the earlier
check's key in its run). A unit of any length, starting anywhere, must still
be found where its two copies are there (a check that sees the run under way
asks for the next one there), at the edge of the narrowed range too (a
search one character narrower misses each of those)."""

from __future__ import annotations

import random

import pytest

from detector.repeated_region import RepeatedRegion
from detector.repeated_units import LONG_KEY_CHARS, LONG_RESCAN_CHARS
from detector.text_loop import TextLoopParams
from tests.detector.unit_checks import unit_checks

PARAMS = TextLoopParams()
EVERY = PARAMS.unit_check_every


def regions(text: str) -> list[tuple[int, RepeatedRegion]]:
    return unit_checks(PARAMS, text)


def stream(start: int, period: int) -> tuple[str, str]:
    """Upper-case letters that repeat nothing up to `start`, then a unit of
    `period` lower-case letters said twice and a little more (its run starts
    exactly at `start`: no letter before it is in the unit)."""
    rng = random.Random(start * 10_000 + period)
    unit = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=period))
    prefix = "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ", k=start))
    return prefix + unit * 2 + unit[: 2 * EVERY], unit


# In text that repeats nothing every search of the whole long range is clean:
# the first at the first check with a long key (2 × LONG_KEY_CHARS), the next
# LONG_RESCAN_CHARS later, and so on. A unit whose second copy ends `since`
# characters after the fifth of them, at a check, with a period of
# since + LONG_KEY_CHARS - 1 (the longest the narrowed search takes in), fires there.
CLEAN_SEARCH = 2 * LONG_KEY_CHARS + 4 * LONG_RESCAN_CHARS
EDGE_CASES = [
    (CLEAN_SEARCH + since - 2 * period, period)
    for since in range(EVERY, LONG_RESCAN_CHARS, EVERY)
    if (period := since + LONG_KEY_CHARS - 1) >= PARAMS.two_copy_chars
]


@pytest.mark.parametrize(("start", "period"), EDGE_CASES)
def test_a_long_unit_at_the_edge_of_the_narrowed_search_is_found_at_its_second_copy(start: int, period: int) -> None:
    text, unit = stream(start, period)
    at = -(-(start + 2 * period) // EVERY) * EVERY
    assert regions(text) == [
        (at, RepeatedRegion(kind="short_unit", start=start, end=at, at=at, unit=unit, repeats=(at - start) // period))
    ]


@pytest.mark.parametrize("period", [300, 333, 479, 480, 481, 911, 3200])
@pytest.mark.parametrize("start", [700, 1013, 1400, 2222])
def test_a_long_unit_anywhere_is_found_at_its_second_copy(start: int, period: int) -> None:
    text, unit = stream(start, period)
    # A check that saw the run under way asks for the next one where its second copy ends.
    at = start + 2 * period
    assert regions(text) == [
        (at, RepeatedRegion(kind="short_unit", start=start, end=at, at=at, unit=unit, repeats=(at - start) // period))
    ]
