"""The viewers' copy of a stored message, built from the events' stored JSON
text: the same JSON as the message encoded whole; and the texts of a
session's messages stored together, merged into as few frames as their order allows."""

from __future__ import annotations

import json

from loopguard_site.live.messages import events_text, texts_merged, viewer_text
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


def test_the_texts_of_a_session_stored_together_merge_their_events_between_detections_and_states():
    events = [{"type": "content", "text": f"part {n}"} for n in range(1, 6)]
    texts = [events_text(seq, [event], [event_json(event)]) for seq, event in enumerate(events, start=1)]
    detection, state = viewer_text({"detection": {"id": 3}}), viewer_text({"state": "stopped"})

    merged = texts_merged([texts[0], texts[1], detection, state, texts[2], texts[3], texts[4]])

    assert [json.loads(text) for text in merged] == [
        {"events": [{**events[0], "seq": 1}, {**events[1], "seq": 2}]},
        {"detection": {"id": 3}},
        {"state": "stopped"},
        {"events": [{**event, "seq": seq} for seq, event in enumerate(events[2:], start=3)]},
    ]
    assert texts_merged(texts[:1]) == texts[:1]  # a lone message's text is sent as it is
