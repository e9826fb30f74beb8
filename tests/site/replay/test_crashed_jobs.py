"""Crashed replay jobs finish, with no duplicate results: a worker killed
with SIGKILL (its task goes back to the queue after the visibility
timeout), and a broker restarted without persistence (its tasks are gone:
the lab's sweep re-queues the job once it made no progress for
LOOPGUARD_JOB_STALE_SECONDS)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone

from loopguard_site.celery import app
from loopguard_site.jobs import FINISHED_STATES
from loopguard_site.replay.models import ReplayJob, ReplayRun
from loopguard_site.replay.services import replay_job_create, replay_jobs_requeue_stale
from loopguard_site.transcripts.services import session_create_from_events
from tests.lab_server import start_lab
from tests.members import project_token

from .conftest import scan_json, store_demo, stored_detections

FILES = ("loop-tools-readmediafile.jsonl", "loop-reasoning-two-exits-riddle.jsonl")


def finished(job_id: int, timeout: float) -> ReplayJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ReplayJob.objects.get(pk=job_id)
        if job.state in FINISHED_STATES:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {job.done}/{job.total} ({job.state})")


def long_session():
    """A session whose replay takes long enough for a kill to land in it."""
    events = [{"type": "content", "text": f"Line {n} of a long and varied answer. "} for n in range(40_000)]
    return session_create_from_events(title="long", model="", source_format="events", parser_version="1", events=events)


@pytest.mark.django_db
def test_the_sweep_requeues_a_stale_job_once_and_leaves_a_fresh_one(
    user, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.LOOPGUARD_JOB_STALE_SECONDS = 60
    dispatched = []
    monkeypatch.setattr("loopguard_site.replay.services._dispatch", dispatched.append)
    stale = replay_job_create(user=user, profiles=["default"], session_ids=[store_demo(FILES[0]).pk])
    fresh = replay_job_create(user=user, profiles=["default"], session_ids=[store_demo(FILES[1]).pk])
    long_ago = timezone.now() - timedelta(seconds=120)
    ReplayJob.objects.filter(pk=stale.pk).update(created=long_ago, state="running")
    ReplayRun.objects.filter(job=stale).update(state="running", claimed_by="lost-task", started=long_ago)
    dispatched.clear()  # the jobs' own first dispatch

    with django_capture_on_commit_callbacks(execute=True):
        first = replay_jobs_requeue_stale(now=timezone.now())
        again = replay_jobs_requeue_stale(now=timezone.now())

    assert (first, again, dispatched) == ([stale.pk], [], [stale.pk])
    assert list(ReplayRun.objects.filter(job=stale).values_list("state", "claimed_by")) == [("queued", "")]
    assert ReplayRun.objects.get(job=fresh).state == "queued"


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_was_killed_with_sigkill_finishes_after_the_visibility_timeout(
    celery_worker_process, user, monkeypatch
):
    worker = celery_worker_process
    worker.env["LOOPGUARD_JOB_VISIBILITY_SECONDS"] = "2"
    long = long_session()
    demo = {name: store_demo(name) for name in FILES}
    monkeypatch.setitem(app.conf, "task_default_queue", worker.queue)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[long.pk, *(s.pk for s in demo.values())])
    worker.start()
    deadline = time.monotonic() + 60
    while not ReplayRun.objects.filter(job=job, session=long, state="running").exists():
        assert time.monotonic() < deadline, worker.log.read_text()
        time.sleep(0.05)
    os.kill(worker.process.pid, signal.SIGKILL)  # the whole worker, mid-task: nothing acknowledges it
    worker.process.wait()
    worker.start()  # restarted: the task comes back once unacknowledged for 2 s

    done = finished(job.pk, 120)

    worker.stop()
    assert (done.state, done.done, done.failed, done.total) == ("done", 3, 0, 3), worker.log.read_text()
    assert ReplayRun.objects.get(job=job, session=long).attempts == 2
    for name, session in demo.items():
        assert stored_detections(session, "default") == scan_json(name, "default")["detections"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_server(port: int) -> subprocess.Popen:
    """A throwaway Redis without persistence (never the shared one)."""
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_broker_restarted_without_persistence_is_requeued_by_the_sweep(
    celery_worker_process, user, tmp_path
):
    port = free_port()
    broker = redis_server(port)
    url = f"redis://127.0.0.1:{port}/0"
    worker = celery_worker_process
    worker.env["REDIS_URL"] = url
    lab = start_lab(tmp_path / "lab", REDIS_URL=url, LOOPGUARD_LIVE_SWEEP_SECONDS="1", LOOPGUARD_JOB_STALE_SECONDS="3")
    try:
        sessions = {name: store_demo(name) for name in FILES}
        _, token = project_token(user=user, name="crash")
        request = json.dumps({"profiles": ["default"], "sessions": [s.pk for s in sessions.values()]}).encode()
        created = urllib.request.urlopen(
            urllib.request.Request(
                f"{lab.url}/api/replays",
                data=request,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            ),
            timeout=30,
        )
        job_id = json.loads(created.read())["id"]
        # the tasks wait in the broker, no worker yet; it restarts empty
        broker.kill()
        broker.wait()
        broker = redis_server(port)
        worker.queue = "celery"  # the lab's default queue: this broker is the test's alone
        worker.start()

        # without the sweep nothing would ever queue the lost tasks again
        done = finished(job_id, 90)
    finally:
        worker.stop()
        lab.stop()
        broker.kill()
        broker.wait()
    assert (done.state, done.done, done.failed, done.total) == ("done", 2, 0, 2), worker.log.read_text()
    for name, session in sessions.items():
        assert stored_detections(session, "default") == scan_json(name, "default")["detections"]
