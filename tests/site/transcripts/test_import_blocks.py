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
