"""`parse_message`: the producer's messages checked before anything is
stored; every refusal names its field."""

from __future__ import annotations

import pytest

from loopguard_site.errors import FieldError
from loopguard_site.live.protocol import MAX_EVENTS_PER_MESSAGE, IngestMessage, parse_message

HELLO = {"type": "content", "text": "Hello"}
HELLO_TEXT = '{"type": "content", "text": "Hello"}'
TIMED = {**HELLO, "t": 1.5, "extra": "kept"}
SHOUT = {"type": "shout"}
NUL_USER = {"type": "user", "text": "a\x00b"}
SEQ = "seq must be a whole number from 1 on"
ONE_OF = "send exactly one of 'event' (one event) or 'events' (a list)"
NON_EMPTY = "events must be a non-empty list of events"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"seq": 1, "event": HELLO}, IngestMessage(1, [HELLO], texts=[HELLO_TEXT])),
        (
            {"seq": 7, "events": [HELLO, {"type": "finish"}]},
            IngestMessage(7, [HELLO, {"type": "finish"}], texts=[HELLO_TEXT, '{"type": "finish"}']),
        ),
        ({"close": True}, IngestMessage(None, [], close=True)),
        ({"ack_now": True}, IngestMessage(None, [], ack_now=True)),  # the held ack, at once
        ({"seq": 2, "event": HELLO, "close": True}, IngestMessage(2, [HELLO], close=True, texts=[HELLO_TEXT])),
        ({"seq": 4, "event": HELLO, "ack_now": True}, IngestMessage(4, [HELLO], texts=[HELLO_TEXT], ack_now=True)),
        ({"seq": 4, "event": HELLO, "ack_now": False}, IngestMessage(4, [HELLO], texts=[HELLO_TEXT])),
        (
            {"seq": 3, "event": {**TIMED, "text": "héllo"}},
            IngestMessage(
                3,
                [{**TIMED, "text": "héllo"}],
                texts=['{"type": "content", "text": "héllo", "t": 1.5, "extra": "kept"}'],
            ),
        ),
    ],
)
def test_it_accepts_the_protocol_messages(message, expected):
    """With each event's JSON text as the events table stores it (UTF-8, not
    `\\u` escapes), which the ingest stores as it is."""
    assert parse_message(message) == expected


@pytest.mark.parametrize(
    ("message", "field", "text"),
    [
        ([1, 2], None, "a message must be a JSON object"),
        ({"event": HELLO}, "seq", SEQ),
        ({"seq": 0, "event": HELLO}, "seq", SEQ),
        ({"seq": "1", "event": HELLO}, "seq", SEQ),
        ({"seq": True, "event": HELLO}, "seq", SEQ),
        ({"seq": 1}, "events", ONE_OF),
        ({"seq": 1, "event": HELLO, "events": [HELLO]}, "events", ONE_OF),
        ({"seq": 1, "events": []}, "events", NON_EMPTY),
        ({"seq": 1, "events": HELLO}, "events", NON_EMPTY),
        (
            {"seq": 1, "event": {"type": "content"}},
            "event.text",
            "event.text: field 'text' of a content event must be a string",
        ),
        ({"seq": 1, "events": [HELLO, SHOUT]}, "events[1].type", "events[1].type: unknown event type 'shout'"),
        ({"seq": 1, "events": [HELLO, "hi"]}, "events[1]", "events[1]: an event must be a JSON object"),
        ({"seq": 1, "event": {**HELLO, "t": "soon"}}, "event.t", "event.t: field 't' must be a number of seconds"),
        ({"seq": 1, "events": [HELLO, NUL_USER]}, "events[1].text", "events[1].text holds a NUL character (\\u0000)"),
        ({"seq": 1, "event": {**HELLO, "t": float("nan")}}, "event", "event holds NaN or Infinity, which JSON has not"),
        ({"close": "yes"}, "close", "close must be true or false"),
        ({"seq": 1, "event": HELLO, "ack_now": 1}, "ack_now", "ack_now must be true or false"),
        (
            {"seq": 1, "events": [HELLO] * (MAX_EVENTS_PER_MESSAGE + 1)},
            "events",
            f"at most {MAX_EVENTS_PER_MESSAGE} events per message",
        ),
    ],
)
def test_it_refuses_a_bad_message_naming_the_field(message, field, text):
    with pytest.raises(FieldError) as raised:
        parse_message(message)
    assert (raised.value.field, str(raised.value)) == (field, text)


def test_the_docstring_examples_run():
    import doctest

    from loopguard_site.live import protocol

    assert doctest.testmod(protocol).failed == 0
    assert doctest.testmod(protocol).attempted == 3
