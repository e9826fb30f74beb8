"""An import encodes and checks its events a COPY block at a time, as the
insert takes them. Here with blocks of 3 events, so that every sample
spans several: each sample of fixtures/formats is stored as exactly the
rows the whole-list path (every event encoded first, then inserted) stores,
and a file whose bad event comes after blocks already sent stores nothing,
nor stops the files after it."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from detector.importers import TranscriptError, parse_bytes
from loopguard_site.transcripts import event_rows, services
from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.services import (
    Upload,
    session_create_from_events,
    session_import_file,
    sessions_import_upload,
)
from tests.detector.importers.test_samples import SAMPLES
from tests.shared_paths import FORMATS_DIR

pytestmark = pytest.mark.django_db

BLOCK = 3


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(event_rows, "COPY_BLOCK", BLOCK)
    monkeypatch.setattr(services, "COPY_BLOCK", BLOCK)


def stored_rows(session_id: int) -> list[tuple]:
    """The session's rows as the database holds them (the JSON as its text)."""
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        query = f"SELECT seq, type, CAST(data AS TEXT) FROM {table} WHERE session_id = %s ORDER BY seq"
        cursor.execute(query, [session_id])
        return cursor.fetchall()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_sample_is_stored_as_the_whole_list_path_stores_it(name, small_blocks, database):
    data = (FORMATS_DIR / name).read_bytes()
    events = parse_bytes(data, name).events
    assert len(events) > BLOCK  # two blocks at least
    # every event encoded first, then inserted: the path before blocks
    whole = session_create_from_events(title="whole", model="", source_format="x", parser_version="x", events=events)

    session = session_import_file(data=data, filename=name)

    assert stored_rows(session.pk) == stored_rows(whole.pk)
    assert len(stored_rows(session.pk)) == len(events)


def events_file(count: int, bad_at: int | None = None) -> bytes:
    """`count` content events; the one at line `bad_at` (from 1) holds a NUL."""
    lines = [{"type": "content", "text": "a\u0000b" if n == bad_at else f"chunk {n}"} for n in range(1, count + 1)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_bad_event_after_blocks_were_sent_stores_nothing_of_that_file(small_blocks, database):
    # event 1 is the session header, so line 40 is event 41, in the fourteenth block
    with pytest.raises(TranscriptError) as caught:
        session_import_file(data=events_file(60, bad_at=40), filename="big.jsonl")

    error = caught.value
    assert (error.file, error.field, error.message) == (
        "big.jsonl", "text", "event 41 holds a NUL character (\\u0000), which cannot be stored"
    )  # fmt: skip
    assert (Session.objects.count(), Event.objects.count(), RawUpload.objects.count()) == (0, 0, 0)


def test_a_bad_file_between_good_ones_stores_the_good_ones_whole(small_blocks, database):
    uploads = [
        Upload.from_bytes("first.jsonl", events_file(30)),
        Upload.from_bytes("bad.jsonl", events_file(60, bad_at=50)),
        Upload.from_bytes("last.jsonl", events_file(20)),
    ]

    outcomes = sessions_import_upload(uploads)

    assert [outcome.line() for outcome in outcomes][1] == (
        "error bad.jsonl: field text: event 51 holds a NUL character (\\u0000), which cannot be stored"
    )
    first, last = outcomes[0].session, outcomes[2].session
    assert Session.objects.count() == 2
    assert [Event.objects.filter(session=s).count() for s in (first, last)] == [31, 21]
    assert list(RawUpload.objects.order_by("session_id").values_list("filename", flat=True)) == [
        "first.jsonl", "last.jsonl"
    ]  # fmt: skip


def lines_file(lines: list[dict]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


EVENTS_LINES = [
    {"type": "session", "model": "m-1", "meta": {"title": "big one"}},
    *({"type": "content", "text": f"chunk {n}"} for n in range(1, 26)),
]
CHUNK = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-x"}
OPENAI_LINES = [{**CHUNK, "choices": [{"index": 0, "delta": {"content": f"part {n} "}}]} for n in range(25)]


@pytest.mark.parametrize(
    ("lines", "model", "title"), [(EVENTS_LINES, "m-1", "big one"), (OPENAI_LINES, "gpt-x", "big")]
)
def test_a_large_file_in_several_blocks_is_stored_as_the_whole_list_path_stores_it(
    lines, model, title, small_blocks, database
):
    data = lines_file(lines)
    events = parse_bytes(data, "big.jsonl").events
    whole = session_create_from_events(title="whole", model="", source_format="x", parser_version="x", events=events)

    session = session_import_file(data=data, filename="big.jsonl")

    rows = stored_rows(session.pk)
    assert rows == stored_rows(whole.pk)
    assert [seq for seq, _, _ in rows] == list(range(1, len(events) + 1))
    assert [kind for _, kind, _ in rows] == [event["type"] for event in events]
    assert [json.loads(text).get("text") for _, _, text in rows] == [event.get("text") for event in events]
    stored = Session.objects.get(pk=session.pk)
    assert (stored.model, stored.title, stored.event_count) == (model, title, len(events))
    assert (session.model, session.title, session.event_count) == (model, title, len(events))


@pytest.mark.parametrize("lines", [EVENTS_LINES, OPENAI_LINES])
def test_invalid_json_in_a_late_block_stores_nothing_and_names_its_line(lines, small_blocks, database):
    text = lines_file(lines).decode().splitlines()
    text[19] = '{"type": "content", "text": '  # line 20, long after the first blocks went to the database

    with pytest.raises(TranscriptError) as caught:
        session_import_file(data="\n".join(text).encode(), filename="big.jsonl")

    assert str(caught.value) == "big.jsonl: line 20: truncated JSON: Expecting value (column 29)"
    assert (Session.objects.count(), Event.objects.count(), RawUpload.objects.count()) == (0, 0, 0)


def test_a_file_over_the_event_limit_in_a_late_block_stores_nothing_and_counts_all(small_blocks, database, settings):
    settings.LOOPGUARD_MAX_EVENTS = 12

    with pytest.raises(TranscriptError) as caught:
        session_import_file(data=events_file(20), filename="big.jsonl")

    assert str(caught.value) == "big.jsonl: 20 events, over the limit of 12 events per session (LOOPGUARD_MAX_EVENTS)"
    assert (Session.objects.count(), Event.objects.count(), RawUpload.objects.count()) == (0, 0, 0)
