"""A live session's states, as one table `(state, trigger) -> state`.

`live` until a detector fires, then `looping`; `stopped` once a stop-level
detection fired (sticky: the producer must abort); `stalled` when no event
came for LOOPGUARD_LIVE_STALL_SECONDS (the next event revives it, as
`looping` if it had looped); `closed` when the producer says
`{"close": true}`, after which it takes nothing. A `finish` event does not
close a session: an agent session goes on with its next turn. An uploaded
(`stored`) session takes none of these. Ingest, close, the stalled sweep,
the tick and the sockets all ask `transition`; a pair missing from the
table is refused with `StateError`.
"""

from __future__ import annotations

from enum import StrEnum

from loopguard_site.errors import FieldError
from loopguard_site.transcripts.models import Session

State = Session.State


class Trigger(StrEnum):
    EVENTS = "events"  # a message's events were stored and fired nothing
    DETECTED = "detected"  # they fired a detection (or revive a stalled session that had looped)
    STOPPED = "stopped"  # a stop-level detection fired, from events or from silence
    CLOSE = "close"  # the producer closed the session
    STALL = "stall"  # nothing arrived for LOOPGUARD_LIVE_STALL_SECONDS


# what every open state becomes (None: it stays as it is, or, stalled, revives as live)
_OPEN = {
    Trigger.EVENTS: None,
    Trigger.DETECTED: State.LOOPING,
    Trigger.STOPPED: State.STOPPED,
    Trigger.CLOSE: State.CLOSED,
}

TRANSITIONS: dict[tuple[str, Trigger], str] = {
    **{(State.LIVE, trigger): after or State.LIVE for trigger, after in _OPEN.items()},
    (State.LIVE, Trigger.STALL): State.STALLED,
    **{(State.LOOPING, trigger): after or State.LOOPING for trigger, after in _OPEN.items()},
    (State.LOOPING, Trigger.STALL): State.STALLED,
    **{(State.STALLED, trigger): after or State.LIVE for trigger, after in _OPEN.items()},
    # stop is sticky: what comes after it changes nothing but a close
    **{(State.STOPPED, trigger): State.STOPPED for trigger in (Trigger.EVENTS, Trigger.DETECTED, Trigger.STOPPED)},
    (State.STOPPED, Trigger.CLOSE): State.CLOSED,
    (State.CLOSED, Trigger.CLOSE): State.CLOSED,  # closing twice is no error
}

# States in which a session takes events (`closed` and `stored` do not).
OPEN_STATES = tuple(state for state in State if (state, Trigger.EVENTS) in TRANSITIONS)


class StateError(FieldError):
    """A trigger the session's state does not take (409: the session's
    state conflicts with the request)."""

    def __init__(self, session_id: int, state: str, trigger: Trigger):
        # a session that cannot be closed is one that never took events (`stored`)
        refused = "it cannot stall" if trigger == Trigger.STALL else "it takes no events"
        super().__init__(f"session {session_id} is {state}: {refused}", status=409)
        self.state, self.trigger = state, trigger


def transition(session_id: int, state: str, trigger: Trigger) -> str:
    """The state after `trigger`, or `StateError` naming the session."""
    try:
        return TRANSITIONS[state, trigger]
    except KeyError:
        raise StateError(session_id, state, trigger) from None


def takes(state: str, trigger: Trigger) -> bool:
    return (state, trigger) in TRANSITIONS
