"""`live_ingest_batch`, the group commit behind the producer sockets: the
messages of many sessions in one transaction, each answered on its own."""

from __future__ import annotations

import json
import random
import re

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from loopguard_site.accounts.models import Project
from loopguard_site.errors import FieldError
from loopguard_site.live import monitor_cache, services
from loopguard_site.live.models import LiveStream
from loopguard_site.live.services import IngestRequest, IngestResult, live_ingest_batch, monitor_save_interval
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_live

pytestmark = pytest.mark.django_db


def content(text: str) -> dict:
    return {"type": "content", "text": text}


def stored(session: Session) -> list[tuple[int, dict]]:
    return list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "data"))


def monitor_reads(queries: CaptureQueriesContext) -> list[str]:
    """The statements that read a stream's pickled Monitor."""
    return [q["sql"] for q in queries if '"live_livestream"."monitor"' in q["sql"].split(" FROM ")[0]]


def test_a_batch_stores_each_sessions_messages_in_order_and_refuses_only_the_bad_ones(producer):
    first, second = (session_create_live(model="m", uploader=producer.user) for _ in range(2))
    closed = session_create_live(model="m", uploader=producer.user)
    Session.objects.filter(pk=closed.pk).update(state=Session.State.CLOSED)
    requests = [
        IngestRequest(first.pk, 1, [content("a1")]),
        IngestRequest(second.pk, 1, [content("b1"), content("b2")]),
        IngestRequest(first.pk, 3, [content("gap")]),
        IngestRequest(closed.pk, 1, [content("late")]),
        IngestRequest(second.pk, 2, [content("b3")], close=True),
        IngestRequest(first.pk, 2, [content("a2")]),
        IngestRequest(first.pk, 1, [content("a1")]),  # sent again: acknowledged, not stored twice
    ]

    outcomes = live_ingest_batch(requests)

    errors = [(str(o), o.field, o.status) for o in outcomes if isinstance(o, FieldError)]
    assert errors == [
        ("seq 3 leaves a gap: the next message is 2", "seq", 400),
        (f"session {closed.pk} is closed: it takes no events", None, 409),
    ]
    results = [o for o in outcomes if isinstance(o, IngestResult)]
    assert [(r.ack, r.state, r.duplicate) for r in results] == [
        (1, "live", False),
        (1, "live", False),
        (2, "closed", False),
        (2, "live", False),
        (1, "live", True),
    ]
    assert [[json.loads(text) for text in r.viewer_texts] for r in results] == [
        [{"events": [{**content("a1"), "seq": 1}]}],
        [{"events": [{**content("b1"), "seq": 1}, {**content("b2"), "seq": 2}]}],
        [{"events": [{**content("b3"), "seq": 3}]}, {"state": "closed"}],
        [{"events": [{**content("a2"), "seq": 2}]}],
        [],
    ]
    assert stored(first) == [(1, content("a1")), (2, content("a2"))]
    assert stored(second) == [(1, content("b1")), (2, content("b2")), (3, content("b3"))]
    assert stored(closed) == []
    sessions = {s.pk: (s.state, s.event_count) for s in Session.objects.all()}
    assert sessions == {first.pk: ("live", 2), second.pk: ("closed", 3), closed.pk: ("closed", 0)}
    acked = dict(LiveStream.objects.values_list("session_id", "acked_seq"))
    assert acked == {first.pk: 2, second.pk: 2, closed.pk: 0}


def test_a_deleted_session_refuses_its_message_and_not_the_others(producer):
    kept, deleted = (session_create_live(model="m", uploader=producer.user) for _ in range(2))
    deleted_pk = deleted.pk
    deleted.delete()

    outcomes = live_ingest_batch(
        [IngestRequest(deleted_pk, 1, [content("x")]), IngestRequest(kept.pk, 1, [content("y")])]
    )

    assert isinstance(outcomes[0], FieldError)
    assert (str(outcomes[0]), outcomes[0].status) == (f"no session {deleted_pk}", 404)
    assert (outcomes[1].ack, stored(kept)) == (1, [(1, content("y"))])


def test_a_message_with_its_events_texts_is_stored_from_them_not_encoded_again(producer, monkeypatch):
    with_texts, without = (session_create_live(model="m", uploader=producer.user) for _ in range(2))

    def encoded_again(event):
        raise AssertionError("encoded again")

    monkeypatch.setattr(services, "event_json", encoded_again)  # a message without texts fails on it

    [outcome] = live_ingest_batch(
        [IngestRequest(with_texts.pk, 1, [content("x")], texts=['{"type": "content", "text": "x"}'])]
    )
    assert (outcome.ack, stored(with_texts)) == (1, [(1, content("x"))])
    assert outcome.viewer_texts == ['{"events": [{"type": "content", "text": "x", "seq": 1}]}']
    [refused] = live_ingest_batch([IngestRequest(without.pk, 1, [content("y")])])
    assert (str(refused), stored(without)) == (
        "seq 1: events[0] could not be processed (AssertionError: encoded again); nothing of the message was stored",
        [],
    )


def test_sessions_pickle_their_monitors_each_at_its_own_interval(producer, monkeypatch):
    """Sessions started together must not all pickle their Monitors in the
    same batch: each has its own interval, within MONITOR_SAVE_EVENTS."""
    monkeypatch.setattr(services, "MONITOR_SAVE_EVENTS", 20)
    sessions = [session_create_live(model="m", uploader=producer.user) for _ in range(4)]
    intervals = [monitor_save_interval(session.pk) for session in sessions]
    assert len(set(intervals)) == 4 and all(10 <= interval <= 20 for interval in intervals)
    rng = random.Random(1)
    for seq in range(1, 46):
        words = "".join(rng.choice("abcdefghij") for _ in range(8)) + " "
        outcomes = live_ingest_batch([IngestRequest(session.pk, seq, [content(words)]) for session in sessions])
        assert not any(isinstance(o, FieldError) or o.detections for o in outcomes)
    saved = dict(LiveStream.objects.filter(session__in=sessions).values_list("session_id", "monitor_events"))
    assert [saved[session.pk] for session in sessions] == [45 // interval * interval for interval in intervals]


def test_a_batch_reads_what_it_needs_of_its_sessions_with_their_locks(producer, loop_events, loop_stop, monkeypatch):
    """The locking read leaves out a session's title and creation time, and
    its stream's time of the last event: a field that a batch's writers read
    later would cost a query a session. The pickled Monitors (tens of KB)
    are read apart, before the messages, and only those this process does
    not hold (the next test): none is read lazily."""
    stopped, closed = (session_create_live(model="Qwen1.5-1.8B-Chat", uploader=producer.user) for _ in range(2))
    live_ingest_batch([IngestRequest(closed.pk, 1, [content("first")])])
    loaded: list[tuple[str, list[str]]] = []

    def recorded(model):
        read = model.refresh_from_db

        def refresh_from_db(self, using=None, fields=None, from_queryset=None):  # a deferred field's first use
            loaded.append((model.__name__, sorted(fields or ())))
            read(self, using, fields, from_queryset)

        return refresh_from_db

    monkeypatch.setattr(Session, "refresh_from_db", recorded(Session))
    monkeypatch.setattr(LiveStream, "refresh_from_db", recorded(LiveStream))
    cut = loop_stop.seq + 1

    outcomes = live_ingest_batch(
        [
            IngestRequest(stopped.pk, 1, loop_events[:cut]),  # a new Monitor, a detection, a state
            IngestRequest(closed.pk, 2, [content("last")], close=True),
        ]
    )

    assert [(o.ack, o.state, len(o.detections)) for o in outcomes] == [(1, "stopped", 1), (2, "closed", 0)]
    assert loaded == []
    rows = {s.pk: (s.state, s.event_count, s.title) for s in Session.objects.all()}
    assert rows == {stopped.pk: ("stopped", cut, stopped.title), closed.pk: ("closed", 2, closed.title)}


def test_once_a_batch_commits_its_open_sessions_monitors_are_this_processs(
    producer, django_capture_on_commit_callbacks
):
    first, second, closing = (session_create_live(model="m", uploader=producer.user) for _ in range(3))
    with django_capture_on_commit_callbacks(execute=True) as hooks:
        live_ingest_batch(
            [
                IngestRequest(first.pk, 1, [content("a")]),
                IngestRequest(second.pk, 1, [content("bbb")]),
                IngestRequest(closing.pk, 1, [content("c")], close=True),
            ]
        )

    assert len(hooks) == 1  # one hook for the batch's Monitors
    revisions = dict(LiveStream.objects.values_list("session_id", "revision"))
    kept = {pk: services.monitors.take(pk, revisions[pk]) for pk in (first.pk, second.pk, closing.pk)}
    assert [kept[pk] is not None for pk in (first.pk, second.pk, closing.pk)] == [True, True, False]
    assert [kept[pk].ctx.offsets["content"] for pk in (first.pk, second.pk)] == [1, 3]  # each its own
    assert services.monitors.take(first.pk, revisions[first.pk]) is None  # taken out while a batch feeds it


def test_a_batch_reads_the_monitors_this_process_does_not_hold_in_one_query(
    producer, django_capture_on_commit_callbacks
):
    """When many producers start at once, a process's first batches are of
    sessions whose Monitors it does not hold: their stored Monitors are read
    in one query a batch, not one a session."""
    sessions = [session_create_live(model="m", uploader=producer.user) for _ in range(4)]
    assert not LiveStream.objects.exists()  # created at their first message, and read whole then
    with django_capture_on_commit_callbacks(execute=True), CaptureQueriesContext(connection) as queries:
        live_ingest_batch([IngestRequest(s.pk, 1, [content("one. ")]) for s in sessions])
    stream_reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and '"live_livestream"' in q["sql"]]
    assert len(stream_reads) == 2 and stream_reads[1] in monitor_reads(queries)  # the locking read, then theirs
    # Another process wrote two of them since: this one's Monitors of those are stale.
    stale = [sessions[1].pk, sessions[3].pk]
    for pk in stale:
        LiveStream.objects.filter(session_id=pk).update(revision=F("revision") + 1)

    with CaptureQueriesContext(connection) as queries:
        outcomes = live_ingest_batch([IngestRequest(s.pk, 2, [content("two. ")]) for s in sessions])

    assert [(o.ack, o.detections) for o in outcomes] == [(2, [])] * 4
    reads = monitor_reads(queries)
    assert len(reads) == 1
    assert sorted(map(int, re.findall(r"\d+", reads[0].split(" IN ")[1]))) == stale
    # The stale Monitors were rebuilt from the stored events: each has seen both messages.
    with django_capture_on_commit_callbacks(execute=True):
        live_ingest_batch([IngestRequest(s.pk, 3, [content("three")]) for s in sessions])
    revisions = dict(LiveStream.objects.values_list("session_id", "revision"))
    offsets = [services.monitors.take(s.pk, revisions[s.pk]).ctx.offsets["content"] for s in sessions]
    assert offsets == [len("one. two. three")] * 4


def test_a_batch_of_new_sessions_reads_their_projects_profiles_once_a_project(producer, monkeypatch):
    """Many producers starting at once make batches of new sessions, each
    wanting a new Monitor of its project's profiles."""
    ours = [session_create_live(model="m", uploader=producer.user) for _ in range(3)]
    theirs = session_create_live(model="m", uploader=producer.user, project=Project.objects.create(name="other"))
    assert len({s.project_id for s in ours}) == 1 and theirs.project_id != ours[0].project_id
    read = monitor_cache.replay_config
    projects_read = []

    def reading(project_id):
        projects_read.append(project_id)
        return read(project_id)

    monkeypatch.setattr(monitor_cache, "replay_config", reading)
    outcomes = live_ingest_batch([IngestRequest(s.pk, 1, [content("a")]) for s in [*ours, theirs]])
    assert [o.ack for o in outcomes] == [1, 1, 1, 1]
    assert sorted(projects_read) == sorted([ours[0].project_id, theirs.project_id])
    # A test's batches never commit, so no Monitor became this process's: the
    # next batch builds both anew, and reads their project again, once.
    live_ingest_batch([IngestRequest(s.pk, 2, [content("b")]) for s in ours[1:]])
    assert projects_read[2:] == [ours[0].project_id]
