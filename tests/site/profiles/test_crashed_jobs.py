"""Crashed tuning jobs finish, once, with the result of an uninterrupted
run: a worker killed with SIGKILL (its task comes back after the visibility
timeout and takes the job over once it is stale), and a broker restarted
without persistence (its task is gone: the lab's sweep re-queues the job
once it showed no progress for LOOPGUARD_JOB_STALE_SECONDS)."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone

import detector.tuning
from loopguard_site.accounts.services import default_project
from loopguard_site.celery import app
from loopguard_site.jobs import FINISHED_STATES
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.services import (
    profiles_import,
    tuning_job_cancel,
    tuning_job_claim,
    tuning_job_create,
    tuning_job_execute,
    tuning_jobs_requeue_stale,
)
from tests.lab_server import start_lab
from tests.members import project_token
from tests.site.replay.test_crashed_jobs import free_port, redis_server

from .conftest import LOOSE_TOML, labelled_sessions


def finished(job_id: int, timeout: float) -> TuningJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = TuningJob.objects.get(pk=job_id)
        if job.state in FINISHED_STATES:
            return job
        time.sleep(0.2)
    raise AssertionError(f"tuning job {job_id} did not finish in {timeout} s: {job.done}/{job.total} ({job.state})")


def reference_result(reviewer) -> dict:
    """The result of the same job run once, undisturbed, in this process
    (created as a row only: no task for it)."""
    job = TuningJob.objects.create(project=default_project(), created_by=reviewer, model_glob="*", base_profile="loose")
    tuning_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == "done", job.error
    return job.result


def a_job(reviewer, **fields) -> TuningJob:
    job = TuningJob.objects.create(
        project=default_project(), created_by=reviewer, model_glob="*", base_profile="default"
    )
    TuningJob.objects.filter(pk=job.pk).update(**fields)
    job.refresh_from_db()
    return job


@pytest.mark.django_db
def test_the_sweep_requeues_a_stale_job_once_and_leaves_fresh_and_finished_ones(
    reviewer, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.LOOPGUARD_JOB_STALE_SECONDS = 60
    enqueued = []
    monkeypatch.setattr("loopguard_site.profiles.services._enqueue", enqueued.append)
    long_ago = timezone.now() - timedelta(seconds=120)
    lost = a_job(reviewer, created=long_ago)  # queued; its task gone with the broker
    dead = a_job(reviewer, created=long_ago, state="running", claimed_by="killed-task", attempts=1, heartbeat=long_ago)
    alive = a_job(reviewer, created=long_ago, state="running", claimed_by="task", attempts=1, heartbeat=timezone.now())
    fresh = a_job(reviewer)
    cancelled = a_job(reviewer, created=long_ago, state="cancelled", claimed_by="task", heartbeat=long_ago)
    over = a_job(reviewer, created=long_ago, state="done", claimed_by="task", heartbeat=long_ago)

    with django_capture_on_commit_callbacks(execute=True):
        first = tuning_jobs_requeue_stale(now=timezone.now())
        again = tuning_jobs_requeue_stale(now=timezone.now())

    assert (sorted(first), again, sorted(enqueued)) == ([lost.pk, dead.pk], [], [lost.pk, dead.pk])
    states = dict(TuningJob.objects.values_list("pk", "state"))
    assert [states[j.pk] for j in (lost, dead, alive, fresh, cancelled, over)] == [
        "queued", "queued", "running", "queued", "cancelled", "done"
    ]  # fmt: skip
    assert TuningJob.objects.get(pk=dead.pk).claimed_by == ""


@pytest.mark.django_db
def test_a_redelivered_task_takes_a_running_job_over_only_once_it_is_stale(reviewer, settings):
    settings.LOOPGUARD_JOB_STALE_SECONDS = 60
    job = a_job(reviewer)
    assert tuning_job_claim(job_id=job.pk, claim="task-1")
    # The broker redelivers a task that outlived its visibility timeout while
    # it still runs: the job is alive, so the copy leaves it alone.
    assert not tuning_job_claim(job_id=job.pk, claim="task-1")
    assert not tuning_job_claim(job_id=job.pk, claim="task-2")
    TuningJob.objects.filter(pk=job.pk).update(heartbeat=timezone.now() - timedelta(seconds=61))
    assert tuning_job_claim(job_id=job.pk, claim="task-1")  # its worker died: the redelivery starts afresh
    job.refresh_from_db()
    assert (job.state, job.claimed_by, job.attempts, job.done) == ("running", "task-1", 2, 0)
    tuning_job_cancel(job=job)
    TuningJob.objects.filter(pk=job.pk).update(heartbeat=timezone.now() - timedelta(seconds=61))
    assert not tuning_job_claim(job_id=job.pk, claim="task-1")  # a cancelled job is over


@pytest.mark.django_db
def test_a_search_that_lost_its_job_stores_nothing(reviewer, settings, monkeypatch):
    """A worker that was only slow, not dead, while the sweep gave its job to
    another task: the first search stops at its next check, and only the
    task holding the job writes to it."""
    labelled_sessions(reviewer)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="*", base_profile="loose")

    def taken_over_midway(*args, progress, cancelled, **kwargs):
        def progress_then_lose(done: int, total: int) -> None:
            progress(done, total)
            if done == 5:  # the sweep re-queued it, and another task took it
                TuningJob.objects.filter(pk=job.pk).update(claimed_by="other-task")

        return detector.tuning.tune(*args, progress=progress_then_lose, cancelled=cancelled, **kwargs)

    monkeypatch.setattr("loopguard_site.profiles.services.tune", taken_over_midway)
    tuning_job_execute(job_id=job.pk, claim="slow-task")

    job.refresh_from_db()
    assert (job.state, job.claimed_by, job.done, job.result) == ("running", "other-task", 5, None)


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_was_killed_with_sigkill_is_taken_over_by_its_redelivered_task(
    celery_worker_process, reviewer, monkeypatch
):
    worker = celery_worker_process
    worker.env.update(LOOPGUARD_JOB_VISIBILITY_SECONDS="2", LOOPGUARD_JOB_STALE_SECONDS="3")
    labelled_sessions(reviewer)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    expected = reference_result(reviewer)
    monkeypatch.setitem(app.conf, "task_default_queue", worker.queue)
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="*", base_profile="loose")
    worker.start()
    deadline = time.monotonic() + 120
    while TuningJob.objects.get(pk=job.pk).done < 5:  # running, its first progress written
        assert time.monotonic() < deadline, worker.log.read_text()
        time.sleep(0.02)
    os.kill(worker.process.pid, signal.SIGKILL)  # mid-search: nothing acknowledges its task
    worker.process.wait()
    killed = TuningJob.objects.get(pk=job.pk)
    assert (killed.state, killed.attempts) == ("running", 1), worker.log.read_text()
    # Restarted once the job is stale (3 s without progress): the redelivered
    # task, back after 2 s unacknowledged, takes it over (a job still alive is
    # left to its worker: see the test above).
    while timezone.now() - TuningJob.objects.get(pk=job.pk).heartbeat <= timedelta(seconds=3):
        time.sleep(0.1)
    worker.start()

    done = finished(job.pk, 120)

    assert worker.stop() == 0, worker.log.read_text()
    assert (done.state, done.attempts, done.claimed_by, done.error) == ("done", 2, killed.claimed_by, "")
    assert done.result == expected
    assert (done.done, done.total) == (expected["evaluations"], expected["evaluations"])


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_broker_restarted_without_persistence_is_requeued_by_the_sweep(
    celery_worker_process, reviewer, tmp_path
):
    labelled_sessions(reviewer)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    expected = reference_result(reviewer)
    port = free_port()
    broker = redis_server(port)
    url = f"redis://127.0.0.1:{port}/0"
    worker = celery_worker_process
    worker.env["REDIS_URL"] = url
    lab = start_lab(tmp_path / "lab", REDIS_URL=url, LOOPGUARD_LIVE_SWEEP_SECONDS="1", LOOPGUARD_JOB_STALE_SECONDS="10")
    try:
        _, token = project_token(user=reviewer, name="crash")
        created = urllib.request.urlopen(
            urllib.request.Request(
                f"{lab.url}/api/tuning",
                data=json.dumps({"model": "*", "profile": "loose"}).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            ),
            timeout=30,
        )
        job_id = json.loads(created.read())["id"]
        # the task waits in the broker, no worker yet; it restarts empty
        broker.kill()
        broker.wait()
        broker = redis_server(port)
        worker.queue = "celery"  # the lab's default queue: this broker is the test's alone
        worker.start()

        done = finished(job_id, 120)
    finally:
        worker.stop()
        lab.stop()
        broker.kill()
        broker.wait()
    assert (done.state, done.attempts, done.error) == ("done", 1, ""), worker.log.read_text()
    # run by the task the sweep sent once the job was stale (10 s): the first was lost
    assert done.started - done.created >= timedelta(seconds=10)
    assert done.result == expected
    assert (done.done, done.total) == (expected["evaluations"], expected["evaluations"])
