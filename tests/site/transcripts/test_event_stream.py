"""Reading a session's events back for a replay: `session_event_stream`
gives exactly the stored events, on PostgreSQL (jsonb text) and SQLite (the
text as stored), and `event_from_json`'s fast path for text chunks agrees
with `json.loads` on any text."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopguard_site.transcripts import selectors
from loopguard_site.transcripts.event_rows import event_from_json, event_json, numbered_events_insert
from loopguard_site.transcripts.layout_rows import session_layouts_update
from loopguard_site.transcripts.models import Session, SessionLayout
from loopguard_site.transcripts.selectors import session_event_stream, sessions_event_streams
from loopguard_site.transcripts.services import session_create_from_events

TRICKY_TEXTS = [
    "abcd",
    "",
    'say "hi"',
    "back\\slash",
    "line\nbreak",
    "tab\t",
    "ünïcödé 中文 🙂",
    '", "type": "x',
    "\x01",
]
EVENTS = [
    {"type": "session", "model": "m"},
    {"type": "turn"},
    *({"type": kind, "text": text} for text in TRICKY_TEXTS for kind in ("content", "reasoning")),
    {"type": "content", "text": "timed", "t": 1.5},
    {"type": "tool_call", "name": "read", "args": {"text": "a", "type": "content"}, "id": "c1"},
    {"type": "tool_result", "id": "c1", "ok": False, "output": "no"},
]


def stored_and_read(chunk: int, monkeypatch) -> tuple[list, list]:
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", chunk)
    session = session_create_from_events(
        title="t", model="m", source_format="events", parser_version="1", events=EVENTS
    )
    return list(enumerate(EVENTS, start=1)), list(session_event_stream(session.pk))


@pytest.mark.parametrize("chunk", [1, 4, 10_000])
@pytest.mark.django_db
def test_it_reads_every_stored_event_in_order(chunk, monkeypatch):
    expected, read = stored_and_read(chunk, monkeypatch)
    assert read == expected


@pytest.mark.embedded
@pytest.mark.parametrize("chunk", [3, 10_000])
@pytest.mark.django_db
def test_it_reads_every_stored_event_in_order_on_sqlite(chunk, monkeypatch):
    expected, read = stored_and_read(chunk, monkeypatch)
    assert read == expected


@pytest.mark.parametrize("text", TRICKY_TEXTS)
@pytest.mark.parametrize("kind", ["content", "reasoning"])
def test_a_text_chunk_decodes_as_json_loads_does_in_both_key_orders(kind, text):
    event = {"type": kind, "text": text}
    for stored in (event_json(event), json.dumps({"text": text, "type": kind}, ensure_ascii=False)):
        assert event_from_json(stored) == json.loads(stored) == event


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None, max_examples=300)
@given(st.dictionaries(st.sampled_from(["type", "text", "t", "name"]), st.text(max_size=8) | st.integers()))
def test_any_event_decodes_as_json_loads_does(event):
    for stored in (event_json(event), json.dumps(event, ensure_ascii=False, sort_keys=True)):
        assert event_from_json(stored) == json.loads(stored)


@pytest.mark.parametrize("stale_counts", [False, True])
@pytest.mark.parametrize("chunk", [1, 5, 10_000])
@pytest.mark.django_db
def test_sessions_read_together_each_give_their_own_events_in_order(chunk, stale_counts, monkeypatch):
    # `chunk` 5: the first two sessions in one query, the third alone (too
    # large, read by keyset), the last alone. A count gone stale (a live
    # session grew) changes how sessions are grouped, not what is read.
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", chunk)
    sizes = [3, 0, len(EVENTS), 1]
    sessions = [
        session_create_from_events(title="t", model="m", source_format="events", parser_version="1", events=EVENTS[:n])
        for n in sizes
    ]
    given = [(session.pk, 0 if stale_counts else session.event_count) for session in sessions]

    read = [(session_id, list(stream)) for session_id, stream in sessions_event_streams(given)]

    assert read == [(s.pk, list(enumerate(EVENTS[:n], start=1))) for s, n in zip(sessions, sizes, strict=True)]


def sessions_appended_after_their_layout(settings) -> list[tuple[int, list[tuple[int, dict]]]]:
    """Two sessions laid out, then appended to as live ingest appends: the
    rows of both interleaved, each session's in reverse seq order, so that
    neither's rows lie in seq order in the table. (session id, its (seq,
    event) in seq order) of each."""
    settings.LOOPGUARD_LAYOUT_MIN_EVENTS = 2
    first, second = (
        session_create_from_events(title="t", model="m", source_format="events", parser_version="1", events=events)
        for events in (EVENTS[:6], EVENTS[6:9])
    )
    session_layouts_update([first, second])
    assert SessionLayout.objects.get(session=first).state["seq"] == 6
    appended = {first.pk: list(enumerate(EVENTS[6:], start=7)), second.pk: list(enumerate(EVENTS[:4], start=4))}
    later = sorted(
        ((session_id, seq, event) for session_id, rows in appended.items() for seq, event in rows),
        key=lambda row: (-row[1], row[0]),
    )
    numbered_events_insert((session_id, seq, event["type"], event_json(event)) for session_id, seq, event in later)
    for session in (first, second):
        Session.objects.filter(pk=session.pk).update(event_count=session.event_count + len(appended[session.pk]))
    return [
        (first.pk, list(enumerate(EVENTS, start=1))),
        (second.pk, [*enumerate(EVENTS[6:9], start=1), *appended[second.pk]]),
    ]


def read_every_way(expected: list[tuple[int, list[tuple[int, dict]]]]) -> None:
    (first, events), (second, _) = expected
    counts = dict(Session.objects.values_list("pk", "event_count"))
    together = [(session_id, list(stream)) for session_id, stream in sessions_event_streams([(first, 0), (second, 0)])]
    assert together == expected
    assert [(session_id, list(session_event_stream(session_id))) for session_id, _ in expected] == expected
    assert list(session_event_stream(first, after=6)) == events[6:]  # the layout's read of what came since
    assert list(session_event_stream(first, after=3, last=8)) == events[3:8]  # a page's window
    assert counts == {first: len(EVENTS), second: 7}


@pytest.mark.parametrize("chunk", [4, 10_000])
@pytest.mark.django_db
def test_events_stored_after_a_layout_are_read_in_seq_order_one_row_per_session(chunk, settings, monkeypatch):
    # `chunk` 10,000: both sessions in one query, a row each; 4: each session by keyset chunks.
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", chunk)
    read_every_way(sessions_appended_after_their_layout(settings))


@pytest.mark.embedded
@pytest.mark.parametrize("chunk", [4, 10_000])
@pytest.mark.django_db
def test_events_stored_after_a_layout_are_read_in_seq_order_on_sqlite(chunk, settings, monkeypatch):
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", chunk)
    read_every_way(sessions_appended_after_their_layout(settings))
