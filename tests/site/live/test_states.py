"""`live.states`: the live session's state table, every (state, trigger)
pair of it, written out here once more so that a change to the table shows."""

from __future__ import annotations

import itertools

import pytest

from loopguard_site.live.states import OPEN_STATES, TRANSITIONS, StateError, Trigger, takes, transition
from loopguard_site.transcripts.models import Session

E, D, S, C, STALL = Trigger.EVENTS, Trigger.DETECTED, Trigger.STOPPED, Trigger.CLOSE, Trigger.STALL
REFUSED = None

EXPECTED = {
    "live": {E: "live", D: "looping", S: "stopped", C: "closed", STALL: "stalled"},
    "looping": {E: "looping", D: "looping", S: "stopped", C: "closed", STALL: "stalled"},
    "stalled": {E: "live", D: "looping", S: "stopped", C: "closed", STALL: REFUSED},
    "stopped": {E: "stopped", D: "stopped", S: "stopped", C: "closed", STALL: REFUSED},
    "closed": {E: REFUSED, D: REFUSED, S: REFUSED, C: "closed", STALL: REFUSED},
    "stored": {E: REFUSED, D: REFUSED, S: REFUSED, C: REFUSED, STALL: REFUSED},
}


def test_the_expectation_covers_every_state_and_trigger():
    assert sorted(EXPECTED) == sorted(Session.State)
    assert all(sorted(row) == sorted(Trigger) for row in EXPECTED.values())


@pytest.mark.parametrize(("state", "trigger"), list(itertools.product(Session.State, Trigger)))
def test_each_state_and_trigger(state, trigger):
    expected = EXPECTED[state][trigger]
    assert takes(state, trigger) == (expected is not REFUSED)
    if expected is REFUSED:
        with pytest.raises(StateError) as refusal:
            transition(12, state, trigger)
        said = "it cannot stall" if trigger == STALL else "it takes no events"
        assert str(refusal.value) == f"session 12 is {state}: {said}"
        assert (refusal.value.status, refusal.value.field) == (409, None)
    else:
        assert transition(12, state, trigger) == expected


def test_the_table_holds_nothing_else_and_the_open_states_are_those_that_take_events():
    assert len(TRANSITIONS) == sum(after is not REFUSED for row in EXPECTED.values() for after in row.values())
    assert OPEN_STATES == ("live", "looping", "stopped", "stalled")
