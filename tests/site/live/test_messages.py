"""The viewers' copy of a stored message, built from the events' stored JSON
text: the same JSON as the message encoded whole."""

from __future__ import annotations

import json

from loopguard_site.live.messages import events_text
from loopguard_site.transcripts.event_rows import event_json


def test_the_events_text_is_the_events_numbered_by_the_server_in_their_own_field_order():
    events = [
        {"type": "content", "text": 'héllo \\ "world"\n', "t": 1.5},
        {"type": "tool_call", "name": "f", "args": {"x": [1, None, True]}, "seq": 99},  # a seq of its own
        {"type": "turn"},
    ]

    text = events_text(7, events, [event_json(event) for event in events])

    expected = {"events": [{**event, "seq": seq} for seq, event in enumerate(events, start=7)]}
    assert json.loads(text) == expected
    assert [list(event) for event in json.loads(text)["events"]] == [list(event) for event in expected["events"]]
