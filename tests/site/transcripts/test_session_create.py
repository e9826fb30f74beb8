from __future__ import annotations

import hashlib

import pytest

from loopguard_site.transcripts.event_rows import SQLITE_BATCH
from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.raw_uploads import raw_upload_read
from loopguard_site.transcripts.services import session_create_from_events

EVENTS = [
    {"type": "session", "model": "m1"},
    {"type": "turn"},
    {"type": "reasoning", "text": "Let me think.", "t": 0.5},
    {"type": "tool_call", "name": "read", "args": {"path": "a.py"}, "id": "c1"},
    {"type": "tool_result", "id": "c1", "ok": False, "output": "no such file", "extra": [1, 2]},
    {"type": "finish", "reason": "tool_calls"},
]


def create(**overrides) -> Session:
    fields = {"title": "t", "model": "m1", "source_format": "events", "parser_version": "events/1", "events": EVENTS}
    return session_create_from_events(**{**fields, **overrides})


@pytest.mark.django_db
def test_it_stores_the_session_and_every_event_in_order():
    session = create(tags=("a", "b"), raw=b'{"type": "turn"}\n', filename="x.jsonl")

    assert (session.title, session.model, session.state, session.event_count, session.tag_names()) == (
        "t", "m1", "stored", 6, ["a", "b"]
    )  # fmt: skip
    assert list(session.events.values_list("seq", "type", "data")) == [
        (seq, event["type"], event) for seq, event in enumerate(EVENTS, start=1)
    ]
    raw = session.raw_upload
    assert (raw.filename, raw_upload_read(raw), raw.size) == ("x.jsonl", b'{"type": "turn"}\n', 17)
    assert raw.sha256 == hashlib.sha256(b'{"type": "turn"}\n').hexdigest()


@pytest.mark.django_db
def test_it_numbers_events_across_batches():
    events = [{"type": "content", "text": str(n)} for n in range(SQLITE_BATCH * 2 + 1)]

    session = create(events=events)

    rows = list(session.events.values_list("seq", "data__text"))
    assert rows == [(n + 1, str(n)) for n in range(SQLITE_BATCH * 2 + 1)]


@pytest.mark.django_db
def test_it_stores_nothing_when_an_event_cannot_be_stored():
    with pytest.raises(KeyError):
        create(events=[*EVENTS, {"text": "an event without a type"}], raw=b"x")

    assert (Session.objects.count(), Event.objects.count(), RawUpload.objects.count()) == (0, 0, 0)
