"""Replay jobs without a worker: the services a task calls, run in the test.
Creating (validation, runs), executing a session's runs (counters, states,
failures), claim-once, cancel."""

from __future__ import annotations

import pytest

from detector.config import builtin_config
from loopguard_site.accounts.services import default_project
from loopguard_site.errors import FieldError
from loopguard_site.profiles.services import profile_version_create
from loopguard_site.replay.models import Detection, ReplayJob, ReplayRun
from loopguard_site.replay.services import (
    replay_job_cancel,
    replay_job_create,
    replay_job_session_execute,
    replay_run_claim,
    replay_session,
    replay_session_runs_abandon,
)
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import profile_breaks, scan_count, scan_json, store_demo, stored_detections

NOT_NAMES = '"profiles" must be a non-empty list of profile names'
KNOWN = "default, seed000, gemini, preview"
REFUSED = "field 'text' of a content event must be a string"
FILTER_KEYS = "model, format, tag, state, q, has_detections"
TOOLS = "loop-tools-readmediafile.jsonl"
CLEAN = "normal-content-sudoku-grids.jsonl"


def broken_session():
    """A session whose second event the monitor refuses (stored unvalidated)."""
    events = [{"type": "turn"}, {"type": "content"}]
    return session_create_from_events(title="bad", model="", source_format="events", parser_version="1", events=events)


def job_counts(job: ReplayJob) -> tuple:
    job.refresh_from_db()
    return job.state, job.done, job.failed, job.total


def run_states(job: ReplayJob) -> list[tuple]:
    return list(job.runs.order_by("session_id", "profile").values_list("session_id", "profile", "state"))


@pytest.mark.django_db
def test_it_creates_one_run_per_session_and_profile_and_dispatches_after_commit(
    user, django_capture_on_commit_callbacks
):
    a, b = store_demo(TOOLS), store_demo(CLEAN)
    with django_capture_on_commit_callbacks() as callbacks:
        job = replay_job_create(user=user, profiles=["default", "seed000", "default"], session_ids=[b.pk, a.pk, b.pk])

    assert (job.state, job.total, job.done, job.profiles, job.selection) == (
        "queued", 4, 0, ["default", "seed000"], {"sessions": [b.pk, a.pk]}
    )  # fmt: skip
    assert run_states(job) == [
        (a.pk, "default", "queued"), (a.pk, "seed000", "queued"),
        (b.pk, "default", "queued"), (b.pk, "seed000", "queued"),
    ]  # fmt: skip
    assert len(callbacks) == 1


@pytest.mark.django_db
def test_all_sessions_with_a_filter_picks_the_matching_ones(user):
    tagged = store_demo(TOOLS, tags=("loop",))
    store_demo(CLEAN, tags=("normal",))
    store_demo(CLEAN)

    job = replay_job_create(user=user, profiles=["default"], all_sessions=True, session_filter={"tag": "loop"})

    assert job.selection == {"all": True, "filter": {"tag": "loop"}}
    assert run_states(job) == [(tagged.pk, "default", "queued")]


ANY = {"profiles": ["default"]}
ALL = {**ANY, "all_sessions": True}


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"profiles": ["nope"], "session_ids": [1]}, "profiles", f"unknown profile 'nope' (known: {KNOWN})"),
        ({"profiles": [], "session_ids": [1]}, "profiles", NOT_NAMES),
        ({"profiles": "default", "session_ids": [1]}, "profiles", NOT_NAMES),
        (ANY, "sessions", 'give either "sessions": [ids] or "all": true'),
        ({**ALL, "session_ids": [1]}, "sessions", 'give either "sessions": [ids] or "all": true'),
        ({**ANY, "session_ids": []}, "sessions", '"sessions" must be a non-empty list of session ids'),
        ({**ANY, "session_ids": [True]}, "sessions", '"sessions" must be a non-empty list of session ids'),
        ({**ANY, "session_ids": [999999]}, "sessions", "no session with id 999999"),
        ({**ALL, "session_filter": {"tag": "none"}}, "filter", "no session matches the filter"),
        ({**ALL, "session_filter": {"x": "1"}}, "filter.x", f"unknown filter key 'x' (known: {FILTER_KEYS})"),
        ({**ALL, "session_filter": {"tag": 3}}, "filter.tag", "filter.tag must be a string"),
        ({**ALL, "session_filter": {"has_detections": "y"}}, "filter.has_detections",
         "filter.has_detections must be true or false"),
        ({**ALL, "session_filter": []}, "filter", '"filter" must be an object'),
        ({**ANY, "session_ids": [1], "session_filter": {"tag": "a"}}, "filter", 'a filter applies to "all": true only'),
    ],
)  # fmt: skip
@pytest.mark.django_db
def test_it_refuses_a_request_naming_the_field(user, arguments, field, message):
    store_demo(CLEAN)
    with pytest.raises(FieldError) as raised:
        replay_job_create(user=user, **arguments)
    assert (raised.value.field, str(raised.value)) == (field, message)
    assert ReplayJob.objects.count() == 0


@pytest.mark.django_db
def test_executing_every_session_finishes_the_job_with_counters_and_summaries(user):
    loop, clean = store_demo(TOOLS), store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[loop.pk, clean.pk])

    replay_job_session_execute(job_id=job.pk, session_id=loop.pk, claim="task-1")
    after_first = job_counts(job)
    replay_job_session_execute(job_id=job.pk, session_id=clean.pk, claim="task-2")

    assert after_first == ("running", 2, 0, 4)
    assert job_counts(job) == ("done", 4, 0, 4)
    assert job.started is not None and job.finished is not None
    runs = job.runs.order_by("session_id", "profile")
    assert list(runs.values_list("state", "attempts", "claimed_by", "detection_count", "first_detection_type")) == [
        ("done", 1, "task-1", scan_count(TOOLS, "default"), scan_json(TOOLS, "default")["detections"][0]["type"]),
        ("done", 1, "task-1", 0, ""),
        ("done", 1, "task-2", 0, ""),
        ("done", 1, "task-2", 0, ""),
    ]
    assert set(Detection.objects.filter(session=loop).values_list("profile", "run__job")) == {("default", job.pk)}


@pytest.mark.django_db
def test_a_failing_run_is_recorded_and_the_others_go_on(user):
    bad, good = broken_session(), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[bad.pk, good.pk])

    replay_job_session_execute(job_id=job.pk, session_id=bad.pk, claim="t1")
    replay_job_session_execute(job_id=job.pk, session_id=good.pk, claim="t2")

    assert job_counts(job) == ("done", 2, 1, 2)
    failed = job.runs.get(session=bad)
    assert (failed.state, failed.error) == ("failed", f"ReplayError: session {bad.pk}, event 2: {REFUSED}")
    assert job.runs.get(session=good).state == "done"


@pytest.mark.django_db
def test_one_profile_failing_fails_its_run_alone_and_the_sessions_other_runs_finish(user, monkeypatch):
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "seed000"], session_ids=[session.pk])
    profile_breaks(monkeypatch, "seed000", at_event=3)
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")

    assert job_counts(job) == ("done", 2, 1, 2)
    assert list(job.runs.order_by("profile").values_list("profile", "state", "error", "detection_count")) == [
        ("default", "done", "", scan_count(TOOLS, "default")),
        ("seed000", "failed", "RuntimeError: detector bug", 0),
    ]
    assert stored_detections(session, "default") == scan_json(TOOLS, "default")["detections"]


@pytest.mark.django_db
def test_a_job_whose_every_run_failed_is_failed(user):
    bad = broken_session()
    job = replay_job_create(user=user, profiles=["default", "seed000"], session_ids=[bad.pk])

    replay_job_session_execute(job_id=job.pk, session_id=bad.pk, claim="t1")

    assert job_counts(job) == ("failed", 2, 2, 2)


@pytest.mark.django_db
def test_two_claims_of_one_run_one_wins(user):
    session = store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    run = job.runs.get()

    assert [replay_run_claim(run_id=run.pk, claim=c) for c in ("task-a", "task-b")] == [True, False]
    run.refresh_from_db()
    assert (run.state, run.claimed_by, run.attempts) == ("running", "task-a", 1)


@pytest.mark.django_db
def test_a_redelivered_task_reclaims_its_run_and_leaves_no_duplicates(user):
    # Its worker died after the claim (and even after storing results in an
    # earlier attempt): the same task id runs again and completes the run.
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    run = job.runs.get()
    assert replay_run_claim(run_id=run.pk, claim="task-a")

    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="task-b")  # a duplicate: finds it taken
    untouched = job_counts(job)
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="task-a")  # the redelivery
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="task-a")  # once more: nothing to do

    assert untouched == ("queued", 0, 0, 1)
    assert job_counts(job) == ("done", 1, 0, 1)
    run.refresh_from_db()
    assert (run.state, run.attempts) == ("done", 2)
    assert Detection.objects.filter(session=session).count() == scan_count(TOOLS, "default")


@pytest.mark.django_db
def test_cancel_stops_the_remaining_runs(user):
    first, second, third = store_demo(TOOLS), store_demo(CLEAN), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[first.pk, second.pk, third.pk])
    replay_job_session_execute(job_id=job.pk, session_id=first.pk, claim="t1")

    replay_job_cancel(job=job)
    replay_job_session_execute(job_id=job.pk, session_id=second.pk, claim="t2")
    replay_job_session_execute(job_id=job.pk, session_id=third.pk, claim="t3")

    assert job_counts(job) == ("cancelled", 1, 0, 3)
    assert run_states(job) == [
        (first.pk, "default", "done"), (second.pk, "default", "cancelled"), (third.pk, "default", "cancelled")
    ]  # fmt: skip
    assert Detection.objects.filter(session=third).count() == 0


@pytest.mark.django_db
def test_a_run_that_was_running_when_cancelled_finishes_and_the_job_stays_cancelled(user):
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    assert replay_run_claim(run_id=job.runs.get().pk, claim="t1")

    replay_job_cancel(job=job)
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")

    assert job_counts(job) == ("cancelled", 1, 0, 1)
    assert run_states(job) == [(session.pk, "default", "done")]


@pytest.mark.django_db
def test_cancelling_a_finished_job_changes_nothing(user):
    session = store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")

    assert replay_job_cancel(job=job).state == "done"


@pytest.mark.django_db
def test_a_task_for_a_deleted_job_returns_quietly(user):
    session = store_demo(CLEAN)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    job_id = job.pk
    job.delete()

    replay_job_session_execute(job_id=job_id, session_id=session.pk, claim="t1")

    assert ReplayRun.objects.count() == 0


@pytest.mark.django_db
def test_a_stored_profile_can_be_replayed_by_name(user):
    # "strict" is the default profile stored under a new name: same detections.
    profile_version_create(
        project=default_project(),
        profile=builtin_config().profiles["default"],
        name="strict",
        user=user,
        origin="import",
    )
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["strict"], session_ids=[session.pk])

    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")

    assert job_counts(job) == ("done", 1, 0, 1)
    # The same detections; those fired by one event may come in another
    # detector order (a stored profile's table is JSON, its key order not kept).
    assert sorted(map(repr, stored_detections(session, "strict"))) == sorted(
        map(repr, scan_json(TOOLS, "default")["detections"])
    )


@pytest.mark.django_db
def test_a_task_that_gives_up_fails_its_sessions_runs_and_the_job_finishes(user):
    first, second = store_demo(CLEAN), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[first.pk, second.pk])
    replay_job_session_execute(job_id=job.pk, session_id=first.pk, claim="t1")
    runs = job.runs.filter(session=second).order_by("id")
    assert replay_run_claim(run_id=runs[0].pk, claim="t2")  # then the database went away, retries ran out

    replay_session_runs_abandon(job_id=job.pk, session_id=second.pk, claim="t2", error="OperationalError: gone")

    assert job_counts(job) == ("done", 4, 2, 4)
    assert list(runs.values_list("state", "error")) == [
        ("failed", "OperationalError: gone"), ("failed", "OperationalError: gone")
    ]  # fmt: skip


@pytest.mark.django_db
def test_giving_up_leaves_the_runs_another_task_holds(user):
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[session.pk])
    held, queued = job.runs.order_by("id")
    assert replay_run_claim(run_id=held.pk, claim="other")

    replay_session_runs_abandon(job_id=job.pk, session_id=session.pk, claim="mine", error="gave up")

    held.refresh_from_db()
    queued.refresh_from_db()
    assert (held.state, queued.state) == ("running", "failed")
    assert job_counts(job) == ("running", 1, 1, 2)


@pytest.mark.django_db
def test_a_job_whose_only_task_gave_up_before_any_claim_is_failed(user):
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])

    replay_session_runs_abandon(job_id=job.pk, session_id=session.pk, claim="t1", error="gave up")

    assert job_counts(job) == ("failed", 1, 1, 1)


@pytest.mark.django_db
def test_a_duplicate_finishing_a_finished_run_counts_nothing(user):
    # Two deliveries of one task (same id) both claimed the run before either finished.
    session = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    run = job.runs.get()
    assert replay_run_claim(run_id=run.pk, claim="t1")  # the first delivery, still working

    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")  # the second finishes it
    replay_session(session=session, profile_name="default", run=run)  # then the first finishes too

    assert job_counts(job) == ("done", 1, 0, 1)
    assert Detection.objects.filter(session=session).count() == scan_count(TOOLS, "default")
