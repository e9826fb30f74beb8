"""A session task replays a chunk of sessions: the same results as one task
per session, cancel and deletion still taken session by session, and the
dispatcher's chunks."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from loopguard_site.replay import services
from loopguard_site.replay.models import CheckpointEvaluation, Detection, ReplayJob, SessionVerdict
from loopguard_site.replay.services import (
    replay_job_cancel,
    replay_job_create,
    replay_job_session_execute,
    replay_job_sessions_execute,
    replay_run_claim,
    task_chunks,
)
from loopguard_site.transcripts.models import Session

from .conftest import DEMO_FILES, PROFILES, scan_json, store_demo, stored_detections
from .test_jobs import broken_session, job_counts, run_states

TOOLS = "loop-tools-readmediafile.jsonl"
CLEAN = "normal-content-sudoku-grids.jsonl"
RUN_FIELDS = (
    "session_id", "profile", "state", "error", "detection_count", "first_detection_at", "first_detection_start",
    "first_detection_channel", "first_detection_detector", "first_detection_type", "first_detection_seq",
    "spent_after_loop",
)  # fmt: skip
DETECTION_FIELDS = (
    "session_id", "profile", "event_seq", "detector", "type", "channel", "start", "end", "at", "unit", "period",
    "repeats", "action", "message", "turn", "extra",
)  # fmt: skip
CHECKPOINT_FIELDS = (
    "session_id", "profile", "event_seq", "detector", "channel", "checkpoint", "start", "end", "check_name", "result",
    "turn",
)  # fmt: skip
VERDICT_FIELDS = (
    "session_id", "profile", "looped", "detection_count", "first_detection_seq", "first_detection_channel",
    "first_detection_detector", "first_detection_type", "first_detection_start", "first_detection_at",
)  # fmt: skip


def stored(job: ReplayJob) -> dict:
    """Everything a job's replay stored, without row ids."""
    order = ("session_id", "profile", "id")
    verdicts = SessionVerdict.objects.order_by("session_id", "profile")
    first_rows = [
        Detection.objects.filter(pk=pk).values_list("session_id", "profile", "event_seq", "detector").get()
        for pk in verdicts.exclude(first_detection_id=None).values_list("first_detection_id", flat=True)
    ]
    return {
        "runs": list(job.runs.order_by("session_id", "profile").values_list(*RUN_FIELDS)),
        "detections": list(Detection.objects.order_by(*order).values_list(*DETECTION_FIELDS)),
        "checkpoints": list(CheckpointEvaluation.objects.order_by(*order).values_list(*CHECKPOINT_FIELDS)),
        "verdicts": list(verdicts.values_list(*VERDICT_FIELDS)),
        "first detection rows": first_rows,
    }


@pytest.mark.django_db
def test_a_chunk_stores_exactly_what_one_task_per_session_stores(user):
    sessions = [store_demo(name) for name in DEMO_FILES] + [broken_session()]
    ids = [session.pk for session in sessions]
    alone = replay_job_create(user=user, profiles=list(PROFILES), session_ids=ids)
    for session_id in ids:
        replay_job_session_execute(job_id=alone.pk, session_id=session_id, claim=f"t{session_id}")
    one_by_one = stored(alone)
    chunked = replay_job_create(user=user, profiles=list(PROFILES), session_ids=ids)

    replay_job_sessions_execute(job_id=chunked.pk, session_ids=ids, claim="chunk")

    total = len(ids) * len(PROFILES)
    assert job_counts(alone) == job_counts(chunked) == ("done", total, len(PROFILES), total)
    assert stored(chunked) == one_by_one
    assert len(one_by_one["detections"]) > len(DEMO_FILES)  # the demo's loops were found
    assert set(chunked.runs.values_list("claimed_by", "attempts")) == {("chunk", 1)}
    for name, session in zip(DEMO_FILES, sessions, strict=False):
        assert stored_detections(session, "default") == scan_json(name, "default")["detections"], name


@pytest.mark.django_db
def test_a_redelivered_chunk_completes_its_claimed_runs_and_a_duplicate_counts_nothing(user):
    sessions = [store_demo(TOOLS), store_demo(CLEAN)]
    ids = [session.pk for session in sessions]
    job = replay_job_create(user=user, profiles=["default", "seed000"], session_ids=ids)
    for run in job.runs.all():  # the first attempt's worker died after claiming them
        assert replay_run_claim(run_id=run.pk, claim="chunk")

    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="other")  # another task: finds them taken
    untouched = job_counts(job)
    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")  # the redelivery
    first = stored(job)
    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")  # once more: nothing to do

    assert untouched == ("queued", 0, 0, 4)
    assert job_counts(job) == ("done", 4, 0, 4)
    assert stored(job) == first
    assert set(job.runs.values_list("state", "attempts")) == {("done", 2)}
    assert stored_detections(sessions[0], "default") == scan_json(TOOLS, "default")["detections"]


@pytest.mark.django_db
def test_a_chunk_replays_only_the_runs_it_can_claim(user):
    loop, clean = store_demo(TOOLS), store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[loop.pk, clean.pk])
    held = job.runs.get(session=loop, profile="gemini")
    assert replay_run_claim(run_id=held.pk, claim="other")  # another task holds it

    replay_job_sessions_execute(job_id=job.pk, session_ids=[loop.pk, clean.pk], claim="chunk")

    assert list(job.runs.order_by("session_id", "profile").values_list("profile", "state", "claimed_by")) == [
        ("default", "done", "chunk"), ("gemini", "running", "other"),
        ("default", "done", "chunk"), ("gemini", "done", "chunk"),
    ]  # fmt: skip
    assert job_counts(job) == ("running", 3, 0, 4)
    assert stored_detections(loop, "default") == scan_json(TOOLS, "default")["detections"]
    assert not Detection.objects.filter(session=loop, profile="gemini").exists()


def streams_with(monkeypatch, at_session: int, action) -> None:
    """Run `action` as the chunk's replay reaches its session number `at_session` (from 0)."""
    streams = services.sessions_event_streams

    def streams_then_act(sessions):
        for number, stream in enumerate(streams(sessions)):
            if number == at_session:
                action()
            yield stream

    monkeypatch.setattr(services, "sessions_event_streams", streams_then_act)


@pytest.mark.django_db
def test_cancel_mid_chunk_stops_at_the_next_session_and_keeps_what_ran(user, monkeypatch):
    first, second, third = store_demo(TOOLS), store_demo(CLEAN), store_demo(TOOLS)
    ids = [first.pk, second.pk, third.pk]
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=ids)
    streams_with(monkeypatch, 1, lambda: replay_job_cancel(job=job))

    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")

    assert job_counts(job) == ("cancelled", 2, 0, 6)
    assert run_states(job) == [
        (first.pk, "default", "done"), (first.pk, "gemini", "done"),
        (second.pk, "default", "cancelled"), (second.pk, "gemini", "cancelled"),
        (third.pk, "default", "cancelled"), (third.pk, "gemini", "cancelled"),
    ]  # fmt: skip
    assert stored_detections(first, "default") == scan_json(TOOLS, "default")["detections"]
    assert set(Detection.objects.values_list("session_id", flat=True)) == {first.pk}


@pytest.mark.django_db
def test_a_session_deleted_mid_chunk_is_left_out_and_the_others_are_stored(user, monkeypatch):
    first, second, third = store_demo(TOOLS), store_demo(CLEAN), store_demo(TOOLS)
    ids = [first.pk, second.pk, third.pk]
    job = replay_job_create(user=user, profiles=["default"], session_ids=ids)
    # Deleted once replayed (its run claimed, its results not yet stored).
    streams_with(monkeypatch, 2, lambda: Session.objects.filter(pk=second.pk).delete())

    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")

    assert run_states(job) == [(first.pk, "default", "done"), (third.pk, "default", "done")]
    assert job_counts(job) == ("done", 3, 0, 3)  # its run went with it, counted as finished
    for session in (first, third):
        assert stored_detections(session, "default") == scan_json(TOOLS, "default")["detections"]
    assert not SessionVerdict.objects.filter(session_id=second.pk).exists()


@pytest.mark.django_db
def test_a_session_deleted_before_its_chunk_reaches_it_is_skipped(user, monkeypatch):
    first, second = store_demo(TOOLS), store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[first.pk, second.pk])
    streams_with(monkeypatch, 1, lambda: Session.objects.filter(pk=second.pk).delete())

    replay_job_sessions_execute(job_id=job.pk, session_ids=[first.pk, second.pk], claim="chunk")

    assert run_states(job) == [(first.pk, "default", "done")]
    assert job_counts(job) == ("done", 2, 0, 2)
    assert list(SessionVerdict.objects.values_list("session_id", "profile")) == [(first.pk, "default")]


@pytest.mark.django_db
def test_a_job_whose_unfinished_sessions_are_all_deleted_ends(user):
    first, second, third = store_demo(TOOLS), store_demo(CLEAN), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[first.pk, second.pk, third.pk])
    replay_job_session_execute(job_id=job.pk, session_id=first.pk, claim="a")
    assert job_counts(job) == ("running", 2, 0, 6)

    Session.objects.filter(pk=first.pk).delete()  # finished runs: counted once, not again
    assert job_counts(job) == ("running", 2, 0, 6)
    Session.objects.filter(pk__in=[second.pk, third.pk]).delete()

    assert job_counts(job) == ("done", 6, 0, 6)
    assert run_states(job) == []
    replay_job_sessions_execute(job_id=job.pk, session_ids=[second.pk, third.pk], claim="b")  # their task, late
    assert job_counts(job) == ("done", 6, 0, 6)


@pytest.mark.django_db
def test_a_queued_job_whose_sessions_are_all_deleted_ends(user):
    session = store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])

    session.delete()

    assert job_counts(job) == ("done", 1, 0, 1)


@pytest.mark.django_db
def test_a_result_the_database_refuses_fails_its_run_alone(user, monkeypatch):
    sessions = [store_demo(TOOLS), store_demo(CLEAN), store_demo(TOOLS)]
    ids = [session.pk for session in sessions]
    job = replay_job_create(user=user, profiles=["default"], session_ids=ids)
    store = services._results_store

    def refusing_the_second(results):
        if any(result.session.pk == ids[1] for result in results):
            raise ValueError("refused")
        store(results)

    monkeypatch.setattr(services, "_results_store", refusing_the_second)

    replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")

    assert job_counts(job) == ("done", 3, 1, 3)
    assert list(job.runs.order_by("session_id").values_list("state", "error")) == [
        ("done", ""), ("failed", "ValueError: refused"), ("done", "")
    ]  # fmt: skip
    assert set(Detection.objects.values_list("session_id", flat=True)) == {ids[0], ids[2]}


@pytest.fixture
def chunk_sizes(monkeypatch):
    """Small chunks: a third of the events left, between 100 and 1,000 events fed; 100 sessions at most."""
    for name, value in (("TASK_EVENTS", 1000), ("MIN_TASK_EVENTS", 100), ("TASK_SHARE_OF_LEFT", 3)):
        monkeypatch.setattr(services, name, value)
    monkeypatch.setattr(services, "SESSIONS_PER_TASK", 100)
    return monkeypatch


TWENTY_EQUAL = [(n, 100) for n in range(1, 21)]


def test_task_chunks_shrink_as_the_events_left_do(chunk_sizes):
    # 2,000 fed: a share of 667 (the 8th session's middle is past it), then of 433 (1,300 left), 300, 200,
    # then the floor of 100
    assert list(task_chunks(TWENTY_EQUAL, profiles=1)) == [
        [1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14], [15, 16], [17], [18], [19], [20]
    ]  # fmt: skip
    # fed twice: shares of 1,000 (the cap) while 3,000 or more are left, then 667, 467, 333, 200, 133, 100
    assert list(task_chunks(TWENTY_EQUAL, profiles=2)) == [
        [1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13], [14, 15], [16, 17], [18], [19], [20]
    ]  # fmt: skip
    assert list(task_chunks([], profiles=4)) == []


def test_task_chunks_are_task_events_at_most_and_min_task_events_at_least(chunk_sizes):
    chunk_sizes.setattr(services, "TASK_EVENTS", 300)
    assert list(task_chunks(TWENTY_EQUAL, profiles=1)) == [
        [1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15], [16, 17], [18], [19], [20]
    ]  # fmt: skip

    chunk_sizes.setattr(services, "MIN_TASK_EVENTS", 300)
    assert list(task_chunks(TWENTY_EQUAL[:8], profiles=1)) == [[1, 2, 3], [4, 5, 6], [7, 8]]
    assert list(task_chunks([(1, 50), (2, 50)], profiles=1)) == [[1, 2]]


def test_a_session_larger_than_a_share_is_a_chunk_of_its_own_once_its_chunk_holds_half_a_share(chunk_sizes):
    chunk_sizes.setattr(services, "MIN_TASK_EVENTS", 300)
    # 2,000 fed, a share of 667: the chunk of 200 (under half a share) takes the large session
    sessions = [(1, 100), (2, 100), (3, 1500), (4, 100), (5, 100), (6, 100)]
    assert list(task_chunks(sessions, profiles=1)) == [[1, 2, 3], [4, 5, 6]]
    # 2,200 fed, a share of 733: the chunk of 600 (over half) closes before it
    sessions = [(1, 300), (2, 300), (3, 1500), (4, 100)]
    assert list(task_chunks(sessions, profiles=1)) == [[1, 2], [3], [4]]


def test_task_chunks_close_at_sessions_per_task(chunk_sizes):
    chunk_sizes.setattr(services, "SESSIONS_PER_TASK", 3)
    sessions = [(1, 10), (2, 10), (3, 10), (4, 10), (5, 700)]

    assert list(task_chunks(sessions, profiles=1)) == [[1, 2, 3], [4, 5]]


def chunk_queries(user, count: int) -> list[str]:
    """The statements one chunk of `count` demo sessions through two profiles sends."""
    ids = [store_demo(TOOLS if n % 2 else CLEAN).pk for n in range(count)]
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=ids)
    with CaptureQueriesContext(connection) as queries:
        replay_job_sessions_execute(job_id=job.pk, session_ids=ids, claim="chunk")
    assert job_counts(job) == ("done", 2 * count, 0, 2 * count)
    return [query["sql"] for query in queries]


@pytest.mark.django_db
def test_a_chunk_costs_a_fixed_number_of_round_trips_and_one_claim_per_session(user):
    # The claim stays per session (a cancel stops at the next session, the
    # tests above); everything else is paid once per chunk, whatever its size.
    two, six = chunk_queries(user, 2), chunk_queries(user, 6)

    def claims(statements: list[str]) -> int:
        return sum('UPDATE "replay_replayrun" SET "state" = \'running\'' in sql for sql in statements)

    assert (claims(two), claims(six)) == (2, 6)
    assert len(two) - claims(two) == len(six) - claims(six) == 17
