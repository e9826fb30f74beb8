"""`transcripts.batch_sql`: the raw-SQL statements for many rows, on
PostgreSQL (the full mode) and SQLite (the embedded mode) alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection, transaction
from django.db.models import CharField, PositiveIntegerField
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext

from loopguard_site.live.models import LiveStream
from loopguard_site.replay.models import ReplayJob, ReplayRun
from loopguard_site.transcripts.batch_sql import _update_text, rows_claim, rows_locked_with, rows_update
from loopguard_site.transcripts.event_rows import event_json, numbered_events_insert, numbered_events_statements
from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.services import session_create_from_events

# Each test runs once per database: PostgreSQL in the full run, SQLite in the embedded one.
DATABASES = [
    pytest.param("postgresql", id="postgresql"),
    pytest.param("sqlite", id="sqlite", marks=pytest.mark.embedded),
]
pytestmark = [pytest.mark.parametrize("vendor", DATABASES), pytest.mark.django_db]

EVENTS = [{"type": "turn"}, {"type": "content", "text": "a"}, {"type": "content", "text": "b"}]


def _sessions(count: int) -> list[Session]:
    return [
        session_create_from_events(title=f"s{n}", model="m", source_format="events", parser_version="1", events=EVENTS)
        for n in range(count)
    ]


def test_it_saves_the_named_fields_of_each_row_its_own_values_and_nothing_else(vendor):
    assert connection.vendor == vendor
    first, second, untouched = _sessions(3)
    first.event_count, first.state, first.title = 7, Session.State.LOOPING, "not saved"
    second.event_count, second.state = 9, Session.State.CLOSED
    events = list(Event.objects.filter(session=first).order_by("seq"))
    events[1].data = {"type": "content", "text": 'é\n"quoted"'}
    events[2].data = {"type": "content", "text": "c", "t": 1.5}

    with CaptureQueriesContext(connection) as queries:
        rows_update(
            (Session, ["event_count", "state"], [first, second]),
            (Event, ["data"], events[1:]),
            (Event, ["type"], []),  # nothing to save: no statement
        )

    assert len(queries) == (1 if vendor == "postgresql" else 2)  # PostgreSQL: one round trip
    stored = {s.pk: s for s in Session.objects.filter(pk__in=[first.pk, second.pk, untouched.pk])}
    assert (stored[first.pk].event_count, stored[first.pk].state, stored[first.pk].title) == (7, "looping", "s0")
    assert (stored[second.pk].event_count, stored[second.pk].state) == (9, "closed")
    assert (stored[untouched.pk].event_count, stored[untouched.pk].state) == (3, "stored")
    assert list(Event.objects.filter(session=first).order_by("seq").values_list("data", flat=True)) == [
        {"type": "turn"},
        {"type": "content", "text": 'é\n"quoted"'},
        {"type": "content", "text": "c", "t": 1.5},
    ]
    assert list(Event.objects.filter(session=second).order_by("seq").values_list("data", flat=True)) == EVENTS


def test_values_an_array_literal_quotes_are_saved_exactly_and_other_values_as_before(vendor):
    assert connection.vendor == vendor
    sessions = _sessions(7)
    titles = ['say "hi"', 'back\\slash \\" both', "{braces}, commas", "NULL", "", "é 中 \n\ttab", " spaced "]
    for session, title in zip(sessions, titles, strict=True):
        session.title = title
    streams = [LiveStream.objects.create(session=session) for session in sessions[:3]]
    times = [datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC), None, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)]
    for stream, time, revision in zip(streams, times, [2**62, -1, 0], strict=True):
        stream.last_event_at, stream.revision, stream.monitor = time, revision, b'\x00{"\\'

    rows_update(
        (Session, ["title"], sessions),
        (LiveStream, ["last_event_at", "revision"], streams),
        (LiveStream, ["monitor"], streams),  # bytes: a list for psycopg, as before
    )

    assert [Session.objects.get(pk=session.pk).title for session in sessions] == titles
    stored = LiveStream.objects.filter(session__in=sessions[:3]).order_by("session_id")
    assert [(s.last_event_at, s.revision, bytes(s.monitor)) for s in stored] == [
        (times[0], 2**62, b'\x00{"\\'),
        (None, -1, b'\x00{"\\'),
        (times[2], 0, b'\x00{"\\'),
    ]


def test_events_go_in_the_same_round_trip_stored_as_an_insert_of_them_stores_them(vendor):
    assert connection.vendor == vendor
    first, second, copied = _sessions(3)
    later = [
        {"type": "content", "text": 'é\\n"quoted" \\ back\tslash'},
        {"type": "tool_call", "name": "run", "arguments": {"n": [1, 2.5, None]}},
        {"type": "content", "text": "ok", "t": 12.25},
    ]

    def rows(session: Session) -> list[tuple[int, int, str, str]]:
        return [(session.pk, seq, event["type"], event_json(event)) for seq, event in enumerate(later, start=4)]

    first.event_count, second.event_count = 6, 6
    with CaptureQueriesContext(connection) as queries:
        rows_update(
            (Session, ["event_count"], [first, second]), before=numbered_events_statements(rows(first) + rows(second))
        )
    numbered_events_insert(rows(copied))  # COPY on PostgreSQL: what the statements must store alike

    assert len(queries) == (1 if vendor == "postgresql" else 2)  # PostgreSQL: one round trip
    assert numbered_events_statements([]) == []

    def stored(session: Session) -> list[tuple[int, str, dict]]:
        return list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "type", "data"))

    assert stored(first) == stored(second) == stored(copied)
    assert [data for _, _, data in stored(first)] == [*EVENTS, *later]
    assert Session.objects.get(pk=first.pk).event_count == 6


def test_it_locks_rows_in_key_order_each_with_its_related_row_as_a_queryset_reads_them(vendor):
    assert connection.vendor == vendor
    plain, uploaded, other = _sessions(3)
    upload = RawUpload.objects.create(session=uploaded, filename="a.jsonl", content=b"abc", size=3, sha256="f" * 64)
    gone = other.pk + 1000

    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        locked = rows_locked_with(Session, {gone, uploaded.pk, plain.pk}, RawUpload, ["session", "filename", "size"])

    [query] = queries
    assert query["sql"].endswith(" FOR UPDATE OF m") == (vendor == "postgresql")  # SQLite locks the database
    assert [(session.pk, related is None) for session, related in locked] == [(plain.pk, True), (uploaded.pk, False)]
    fields = [f.attname for f in Session._meta.concrete_fields]
    stored = Session.objects.filter(pk__in=[plain.pk, uploaded.pk]).order_by("pk")
    assert [[getattr(s, f) for f in fields] for s, _ in locked] == [[getattr(s, f) for f in fields] for s in stored]
    related = locked[1][1]
    assert (related.pk, related.session_id, related.filename, related.size) == (upload.pk, uploaded.pk, "a.jsonl", 3)
    assert related.get_deferred_fields() == {"content", "content_encoding", "file", "sha256"}  # read when first used
    assert rows_locked_with(Session, [], RawUpload, ["session"]) == []


def test_it_reads_only_the_own_fields_asked_for_and_the_others_when_first_used(vendor):
    assert connection.vendor == vendor
    (session,) = _sessions(1)
    session.refresh_from_db()

    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        [(locked, _)] = rows_locked_with(Session, [session.pk], RawUpload, ["session"], own=["state", "project"])
        read = (locked.pk, locked.state, locked.project_id, locked._state.adding, locked._state.db)
        assert len(queries) == 1
        deferred = locked.get_deferred_fields()
        assert (locked.title, locked.created) == (session.title, session.created)  # each one query more
        assert len(queries) == 3

    assert read == (session.pk, session.state, session.project_id, False, "default")
    every = {f.attname for f in Session._meta.concrete_fields}
    assert deferred == every - {"id", "state", "project_id"}
    locked.event_count = 11
    locked.save(update_fields=["event_count"])  # an instance as a queryset gives it: saved by its key
    assert Session.objects.get(pk=session.pk).event_count == 11


def test_a_model_whose_init_signals_have_a_receiver_is_built_through_its_init(vendor):
    assert connection.vendor == vendor
    (session,) = _sessions(1)
    heard: list[tuple[str, int]] = []

    def receiver(sender, instance, **kwargs):
        heard.append((sender.__name__, instance.pk))

    post_init.connect(receiver, sender=Session)
    try:
        with transaction.atomic():
            [(locked, _)] = rows_locked_with(Session, [session.pk], RawUpload, ["session"], own=["state"])
    finally:
        post_init.disconnect(receiver, sender=Session)

    assert heard == [("Session", session.pk)]
    assert (locked.pk, locked.state, locked.get_deferred_fields()) == (
        session.pk,
        session.state,
        {f.attname for f in Session._meta.concrete_fields} - {"id", "state"},
    )


@pytest.mark.parametrize("durable", [True, False])
def test_it_claims_the_queued_rows_and_those_running_under_the_same_claim_and_says_which(vendor, durable):
    assert connection.vendor == vendor
    (session,) = _sessions(1)
    job = ReplayJob.objects.create(profiles=["default"], total=5, project_id=session.project_id)
    earlier = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    states = [
        ("queued", "", 0),
        ("running", "task-a", 1),  # this task's, redelivered
        ("running", "task-b", 1),  # another task's
        ("done", "task-a", 1),
        ("cancelled", "", 0),
    ]
    runs = [
        ReplayRun.objects.create(
            job=job, session=session, profile=f"p{n}", state=state, claimed_by=by, attempts=attempts, started=earlier
        )
        for n, (state, by, attempts) in enumerate(states)
    ]
    ReplayRun.objects.create(job=job, session=session, profile="p5")  # queued, not asked for
    now = datetime(2026, 11, 25, 6, 30, tzinfo=UTC)

    with CaptureQueriesContext(connection) as queries:
        taken = rows_claim(ReplayRun, [run.pk for run in runs], claim="task-a", now=now, durable=durable)

    [query] = queries  # one round trip, the commit not waiting for the disk when not durable (PostgreSQL)
    unflushed = not durable and vendor == "postgresql"
    assert query["sql"].startswith("SET LOCAL synchronous_commit TO OFF; UPDATE ") == unflushed
    assert taken == {runs[0].pk, runs[1].pk}
    stored = ReplayRun.objects.filter(job=job).order_by("pk").values_list("state", "claimed_by", "attempts", "started")
    assert list(stored) == [
        ("running", "task-a", 1, now),
        ("running", "task-a", 2, now),
        ("running", "task-b", 1, earlier),
        ("done", "task-a", 1, earlier),
        ("cancelled", "", 0, earlier),
        ("queued", "", 0, None),
    ]
    assert rows_claim(ReplayRun, [], claim="task-a", now=now) == set()


class _Tenfold(PositiveIntegerField):
    """An integer field of a project's own that prepares its values: stores ten times them."""

    def get_prep_value(self, value):
        return None if value is None else 10 * super().get_prep_value(value)


class _Marked(CharField):
    def get_db_prep_value(self, value, connection, prepared=False):
        return f"marked {super().get_db_prep_value(value, connection, prepared)}"


def test_a_field_that_prepares_its_own_values_has_them_prepared_and_others_go_as_they_are(vendor, monkeypatch):
    assert connection.vendor == vendor
    sessions = _sessions(3)
    for session, count in zip(sessions, (4, 5, 6), strict=True):
        session.event_count, session.state = count, Session.State.LOOPING
    rows_update((Session, ["event_count", "state"], sessions))  # Django's own fields: ints and strs as they are
    assert list(
        Session.objects.filter(pk__in=[s.pk for s in sessions]).order_by("pk").values_list("event_count", "state")
    ) == [
        (4, "looping"),
        (5, "looping"),
        (6, "looping"),
    ]

    monkeypatch.setattr(Session._meta.get_field("event_count"), "__class__", _Tenfold)
    monkeypatch.setattr(Session._meta.get_field("state"), "__class__", _Marked)
    _update_text.cache_clear()
    try:
        rows_update((Session, ["event_count", "state"], sessions))
        saved = list(
            Session.objects.filter(pk__in=[s.pk for s in sessions]).order_by("pk").values_list("event_count", "state")
        )
    finally:
        monkeypatch.undo()
        _update_text.cache_clear()
    assert saved == [(40, "marked looping"), (50, "marked looping"), (60, "marked looping")]
