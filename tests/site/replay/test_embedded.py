"""The embedded mode (no Redis, SQLite): the in-process worker thread runs a
replay job, its dispatcher chaining chunk after chunk of session tasks, and
its progress reaches the job's socket on the in-memory channel layer."""

from __future__ import annotations

import threading

import pytest
from asgiref.sync import async_to_sync
from celery.signals import task_postrun
from channels.testing import WebsocketCommunicator

from loopguard_site.asgi import application
from loopguard_site.celery import app
from loopguard_site.embedded_worker import EmbeddedWorker
from loopguard_site.replay import services
from loopguard_site.replay.messages import send_job_progress
from loopguard_site.replay.models import Detection, ReplayJob
from loopguard_site.replay.services import replay_job_create
from tests.members import project_token

from .conftest import scan_json, store_demo, stored_detections

TOOLS = "loop-tools-readmediafile.jsonl"


@pytest.mark.embedded
@pytest.mark.django_db(transaction=True)
def test_the_embedded_worker_completes_a_job_dispatched_in_chunks(user, monkeypatch):
    monkeypatch.setattr(services, "DISPATCH_CHUNK", 2)  # 5 sessions: three dispatcher tasks
    sessions = [store_demo(TOOLS) for _ in range(5)]
    finished = threading.Event()

    def after_each_task(**kwargs) -> None:  # runs on the worker's threads
        if ReplayJob.objects.exclude(state__in=["queued", "running"]).exists():
            finished.set()

    task_postrun.connect(after_each_task, weak=False)
    # One thread: the test database is SQLite in memory with a shared cache,
    # whose table locks fail at once instead of waiting as the lab's WAL file
    # does (a concurrent writer would be retried: correct, but not exact).
    worker = EmbeddedWorker(app, threads=1)
    worker.start()
    try:
        job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[s.pk for s in sessions])
        completed = finished.wait(timeout=120)
    finally:
        worker.stop()
        task_postrun.disconnect(after_each_task)

    assert completed
    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.total) == ("done", 10, 0, 10)
    assert set(job.runs.values_list("state", "attempts")) == {("done", 1)}
    expected = scan_json(TOOLS, "default")["detections"]
    assert all(stored_detections(session, "default") == expected for session in sessions)
    assert Detection.objects.filter(profile="gemini").count() == 0


@pytest.mark.embedded
@pytest.mark.django_db(transaction=True)
def test_progress_sent_from_a_worker_thread_reaches_the_jobs_socket_at_once(user):
    # The embedded worker's threads send with their own event loops; the
    # socket's consumer waits on Daphne's (here: the test's) loop.
    job = replay_job_create(user=user, profiles=["default"], session_ids=[store_demo(TOOLS).pk])
    _, token = project_token(user=user, name="test")

    async def scenario() -> list:
        socket = WebsocketCommunicator(
            application, f"/ws/replays/{job.pk}", headers=[(b"authorization", f"Bearer {token}".encode())]
        )
        await socket.connect(timeout=10)
        messages = [await socket.receive_json_from(timeout=10)]
        job.state, job.done = "running", 1
        sender = threading.Thread(target=send_job_progress, args=(job,))
        sender.start()
        messages.append(await socket.receive_json_from(timeout=5))
        sender.join()
        await socket.disconnect()
        return messages

    assert async_to_sync(scenario)() == [
        {"id": job.pk, "state": "queued", "done": 0, "failed": 0, "total": 1},
        {"id": job.pk, "state": "running", "done": 1, "failed": 0, "total": 1},
    ]
