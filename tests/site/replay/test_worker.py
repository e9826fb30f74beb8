"""A replay job through a real Celery worker process on Redis and PostgreSQL
(full mode), watched over a real WebSocket on the Redis channel layer; and a
worker process killed in the middle of a task."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psycopg
import pytest
from asgiref.sync import async_to_sync
from celery.events.receiver import EventReceiver
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.db import connection

from loopguard_site.asgi import application
from loopguard_site.celery import app
from loopguard_site.jobs import FINISHED_STATES
from loopguard_site.replay.services import replay_job_create
from loopguard_site.replay.tasks import replay_session_runs
from loopguard_site.transcripts.models import Session
from tests.members import project_token
from tests.sockets import connect_refused

from .conftest import scan_count, scan_json, store_demo, stored_detections

FILES = ("loop-tools-readmediafile.jsonl", "loop-reasoning-two-exits-riddle.jsonl")
PROFILES = ("default", "seed000")


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_replays_the_job_and_progress_arrives_over_the_websocket(
    celery_worker_process, user, monkeypatch
):
    assert isinstance(get_channel_layer(), RedisPubSubChannelLayer)
    worker = celery_worker_process
    sessions = {name: store_demo(name) for name in FILES}
    # The job's first task goes to the worker's own queue; the rest follow it there.
    monkeypatch.setitem(app.conf, "task_default_queue", worker.queue)
    job = replay_job_create(user=user, profiles=list(PROFILES), session_ids=[s.pk for s in sessions.values()])
    _, token = project_token(user=user, name="test")

    async def watch() -> tuple:
        socket = WebsocketCommunicator(
            application, f"/ws/replays/{job.pk}", headers=[(b"authorization", f"Bearer {token}".encode())]
        )
        connected = await socket.connect(timeout=10)
        messages = [await socket.receive_json_from(timeout=10)]
        worker.start()  # only now: the first message is the snapshot of a queued job
        while messages[-1]["state"] not in FINISHED_STATES:
            messages.append(await socket.receive_json_from(timeout=120))
        await socket.disconnect()
        return connected, messages

    try:
        connected, messages = async_to_sync(watch)()
    except TimeoutError as exc:
        worker.stop()
        raise AssertionError(f"the job's progress stopped coming; the worker's log:\n{worker.log.read_text()}") from exc
    status = worker.stop()

    assert connected == (True, None)
    progress = {"id": job.pk, "failed": 0, "total": 4}
    # One task per session replays both its profiles (one read of its
    # events), then sends the counters: its first for the job always goes.
    assert messages == [
        {**progress, "state": "queued", "done": 0},
        {**progress, "state": "running", "done": 2},
        {**progress, "state": "done", "done": 4},
    ], worker.log.read_text()
    for name, session in sessions.items():
        for profile in PROFILES:
            assert stored_detections(session, profile) == scan_json(name, profile)["detections"], (name, profile)
    assert status == 0, worker.log.read_text()


@pytest.mark.parametrize(
    ("path", "headers", "refusal"),
    [
        ("/ws/replays/JOB", [], 4401),
        ("/ws/replays/JOB?token=lg_not-a-token", [], 4401),
        ("/ws/replays/999999", "TOKEN", 4404),
    ],
)
@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_socket_without_a_token_or_for_an_unknown_job(
    live_services, user, path, headers, refusal, monkeypatch, unconsumed_queue
):
    monkeypatch.setitem(app.conf, "task_default_queue", unconsumed_queue)  # the job need not run
    session = store_demo(FILES[0])
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    _, token = project_token(user=user, name="test")
    if headers == "TOKEN":
        headers = [(b"authorization", f"Bearer {token}".encode())]

    async def scenario() -> tuple:
        return await connect_refused(
            WebsocketCommunicator(application, path.replace("JOB", str(job.pk)), headers=headers)
        )

    assert async_to_sync(scenario)() == (True, refusal)


def pool_process(pid: int) -> int:
    """The one pool process of a `--concurrency 1` prefork worker (events
    carry the main process's pid, not the pool process's)."""
    (child,) = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(child)


class KillOnceWatcher(EventReceiver):
    """Watches the worker's task events: kills the pool process running the
    session task the first time it starts, lets the second attempt finish."""

    def __init__(self, connection, *, worker, session_lock):
        self.worker, self.session_lock = worker, session_lock
        self.session_task: str | None = None
        self.starts: list[int] = []
        self.outcome: str | None = None
        handlers = {"task-received": self.received, "task-started": self.started}
        handlers |= {"task-succeeded": self.finished, "task-failed": self.finished}
        super().__init__(connection, handlers=handlers, app=app)

    def on_consume_ready(self, *args, **kwargs) -> None:
        super().on_consume_ready(*args, **kwargs)
        self.worker.start("--pool", "prefork", "--concurrency", "1", "--task-events")  # no event can be missed

    def received(self, event: dict) -> None:
        # Task events of other workers on the same Redis (another test run) are not ours.
        if event["name"] == replay_session_runs.name and event.get("hostname") == self.worker.node:
            self.session_task = event["uuid"]

    def started(self, event: dict) -> None:
        if event["uuid"] != self.session_task:
            return
        self.starts.append(pool_process(self.worker.process.pid))
        if len(self.starts) == 1:
            # It cannot have finished: storing results waits for the session lock.
            os.kill(self.starts[0], signal.SIGKILL)
        else:
            self.session_lock.rollback()  # release: the redelivered attempt may finish

    def finished(self, event: dict) -> None:
        if event["uuid"] == self.session_task:
            self.outcome = event["type"]
            self.should_stop = True


@pytest.mark.django_db(transaction=True)
def test_a_task_whose_worker_process_is_killed_is_redelivered_and_leaves_no_duplicates(
    celery_worker_process, user, monkeypatch
):
    worker = celery_worker_process
    name = FILES[0]
    session = store_demo(name)
    monkeypatch.setitem(app.conf, "task_default_queue", worker.queue)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    db = connection.settings_dict
    session_lock = psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"] or None, dbname=db["NAME"]
    )
    session_lock.execute(f"SELECT id FROM {Session._meta.db_table} WHERE id = %s FOR UPDATE", [session.pk])

    try:
        with app.connection_for_read() as broker:
            watcher = KillOnceWatcher(broker, worker=worker, session_lock=session_lock)
            watcher.capture(timeout=120)
    finally:
        session_lock.close()
    status = worker.stop()

    log = worker.log.read_text()
    assert (watcher.outcome, len(watcher.starts), watcher.starts[0] != watcher.starts[1]) == (
        "task-succeeded", 2, True
    ), log  # fmt: skip
    assert "WorkerLostError" in log
    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == ("done", 1, 0)
    run = job.runs.get()
    # The kill lands just before or just after the first attempt claimed the
    # run (the event says the task started, not how far it got); either way
    # the redelivered attempt, under the same task id, completes it.
    assert (run.state, run.detection_count, run.attempts in (1, 2)) == ("done", scan_count(name, "default"), True)
    assert stored_detections(session, "default") == scan_json(name, "default")["detections"]
    assert status == 0, log
