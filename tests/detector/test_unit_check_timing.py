"""Where the character-level check reports a loop: a check that sees a run
under way asks for the next check where the run will have what its unit
needs (`ShortUnitFinder._check_when_due`), so with checks every 32
characters the loop is reported at the same position as by a finder that
checks at every character, whenever a check can see the run before its
need: the run is `KEY_CHARS` characters past its first copy
(`LONG_KEY_CHARS` for a unit longer than `unit_max_chars`), and a check
falls at least once in any 32 characters. (Units with a letter: a
letter-free unit of several lines may need a row more or less in one
rotation than in another, as before.)"""

from __future__ import annotations

import dataclasses
import random

import pytest

from detector.repeated_units import KEY_CHARS, LONG_KEY_CHARS
from detector.text_loop import TextLoopParams
from tests.detector.unit_checks import unit_checks

PARAMS = TextLoopParams()
EVERY_CHARACTER = dataclasses.replace(PARAMS, unit_check_every=1)
ALPHABETS = ("abcdefghijklmnopqrstuvwxyz ", "思考分析需求设计方案，。", "ab-=+|_ \n", "abc de\n")


def case(seed: int) -> tuple[str, int]:
    """Letters that repeat nothing (none in any alphabet), then one unit
    said over and over, then other letters; and the unit's length."""
    rng = random.Random(seed)
    alphabet = rng.choice(ALPHABETS)
    unit = "".join(rng.choices(alphabet, k=rng.randint(1, 120)))
    prefix = "".join(rng.choices("KLMNPQRSTVWXYZ", k=rng.randint(0, 200)))
    after = "".join(rng.choices("KLMNPQRSTVWXYZ", k=40))
    return prefix + unit * rng.randint(2, 12) + after, len(unit)


@pytest.mark.parametrize("seed", range(300))
def test_a_loop_is_reported_where_a_check_at_every_character_reports_it(seed: int) -> None:
    text, period = case(seed)
    exact = unit_checks(EVERY_CHARACTER, text)
    found = unit_checks(PARAMS, text)
    if not exact:
        assert found == []
        return
    (at, region), *_ = exact
    key = KEY_CHARS if region.period <= PARAMS.unit_max_chars else LONG_KEY_CHARS
    if at - region.start >= region.period + key + PARAMS.unit_check_every:
        assert found[:1] == exact[:1]
    else:  # seen by no check before its need: at the first check after it, as before
        assert found[0][1].at - at < PARAMS.unit_check_every
