"""Shared fixtures and the two-mode policy of the suite.

./scripts/test runs pytest twice: the full mode (PostgreSQL, Redis; every test
not marked `embedded`) and the embedded mode (no REDIS_URL, SQLite; the tests
marked `embedded`). A test that needs a service fails when it is missing; it
never skips.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_runtest_setup(item: pytest.Item) -> None:
    from django.conf import settings

    if item.get_closest_marker("embedded") and not settings.LOOPGUARD_EMBEDDED:
        pytest.fail("an `embedded` test needs the embedded mode: unset REDIS_URL (./scripts/test does)", pytrace=False)


@pytest.fixture(autouse=True)
def live_ingest_thread_stopped() -> Iterator[None]:
    """After each test, the live ingest thread (started by a producer socket
    of the test) closes its database connection and ends: the test database
    can be dropped at the end of the run."""
    yield
    from loopguard_site.live.ingest_worker import ingest_worker

    ingest_worker.stop()


# Full mode: every queue this run's tasks go to is named `test-<pid>-...`,
# so the end-of-run check below sees this run's queues only (several runs
# may share one Redis).
QUEUE_PREFIX = f"test-{os.getpid()}-"


def _redis_client():
    import redis
    from django.conf import settings

    return redis.Redis.from_url(settings.REDIS_URL)


def tasks_left(client) -> dict[str, int]:
    """This run's queues that hold tasks, and how many."""
    lengths = {key.decode(): client.llen(key) for key in client.scan_iter(match=f"{QUEUE_PREFIX}*", _type="list")}
    return {name: length for name, length in lengths.items() if length}


@pytest.fixture(scope="session", autouse=True)
def no_tasks_left_in_redis() -> Iterator[None]:
    """Full mode: tasks default to this run's own queue, and at the end of
    the run no queue of it may hold a task: a test that queues work no
    worker runs must say so (`unconsumed_queue`), so the run leaves Redis
    as it found it. The queues are emptied either way."""
    from django.conf import settings

    if not settings.REDIS_URL:
        yield
        return
    from loopguard_site.celery import app

    app.conf.task_default_queue = f"{QUEUE_PREFIX}default"
    yield
    client = _redis_client()
    left = tasks_left(client)
    bindings = list(client.scan_iter(match=f"_kombu.binding*.{QUEUE_PREFIX}*"))
    if left or bindings:
        client.delete(*left, *bindings)
    assert not left, f"tasks left in Redis queues at the end of the run (queue: tasks): {left}"


@contextlib.contextmanager
def unconsumed_queue_named() -> Iterator[str]:
    """A queue no worker reads (full mode), emptied when the block ends."""
    name = f"{QUEUE_PREFIX}unconsumed-{uuid.uuid4().hex}"
    try:
        yield name
    finally:
        client = _redis_client()
        client.delete(name, *client.scan_iter(match=f"_kombu.binding*.{name}"))


@pytest.fixture
def unconsumed_queue() -> Iterator[str]:
    """A queue no worker reads, for a test whose tasks are never to run
    (it does their work itself); emptied after the test."""
    with unconsumed_queue_named() as name:
        yield name


@pytest.fixture(scope="session")
def live_services(django_db_blocker) -> None:
    """Full mode: PostgreSQL and Redis must be configured and answer."""
    import redis
    from django.conf import settings
    from django.db import connection

    if settings.LOOPGUARD_EMBEDDED or connection.vendor != "postgresql":
        pytest.fail(
            "this test needs the full mode: DATABASE_URL=postgres://... and REDIS_URL=redis://... "
            f"(database: {connection.vendor}, REDIS_URL: {settings.REDIS_URL}); run ./scripts/test",
            pytrace=False,
        )
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {settings.REDIS_URL} does not answer: {exc}", pytrace=False)
    try:
        with django_db_blocker.unblock():
            connection.ensure_connection()
    except Exception as exc:  # noqa: BLE001 - any driver error means "unreachable"
        pytest.fail(f"PostgreSQL ({settings.DATABASES['default']['HOST']}) does not answer: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """A PostgreSQL test database per pytest process, so that runs sharing one
    server (developers at once, CI) never drop each other's database."""
    from django.conf import settings

    for database in settings.DATABASES.values():
        if database["ENGINE"] == "loopguard_site.postgresql":
            database.setdefault("TEST", {})["NAME"] = f"test_{database['NAME']}_{os.getpid()}"


def database_url(settings_dict: dict) -> str:
    """The DATABASE_URL of the test database pytest-django set up."""
    user = settings_dict["USER"] + (f":{settings_dict['PASSWORD']}" if settings_dict["PASSWORD"] else "")
    return f"postgres://{user}@{settings_dict['HOST']}:{settings_dict['PORT']}/{settings_dict['NAME']}"


class WorkerProcess:
    """A `celery -A loopguard_site worker` process consuming a queue of its
    own (so no other worker on the same Redis takes the test's tasks).
    Tasks sent to `queue` before `start()` wait there for it."""

    def __init__(self, queue: str, env: dict, log: Path):
        self.queue = queue
        self.node = f"{queue}@{socket.gethostname()}"
        self.env = env
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self, *options: str) -> None:
        """Start it; `options` replace the default `--pool solo` (e.g.
        `--pool prefork --concurrency 1 --task-events`)."""
        with self.log.open("w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "loopguard_site", "worker", *(options or ("--pool", "solo")),
                 "--queues", self.queue, "--hostname", self.node, "--without-heartbeat", "--without-mingle",
                 "--without-gossip", "--loglevel", "INFO"],
                cwd=REPO_ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def stop(self) -> int | None:
        """Warm shutdown (running tasks finish); the worker's exit status."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


@pytest.fixture
def celery_worker_process(live_services, settings, tmp_path) -> Iterator[WorkerProcess]:
    """A real worker process on Redis that reads the test database (full
    mode), not started yet. The test needs `django_db(transaction=True)` so
    the worker sees its rows, sends tasks to `worker.queue` and calls
    `worker.start()`; `worker.log` is the worker's output."""
    from django.db import connection

    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "REDIS_URL": settings.REDIS_URL,
        "LOOPGUARD_DATA_DIR": str(tmp_path),
    }
    worker = WorkerProcess(f"{QUEUE_PREFIX}{uuid.uuid4().hex}", env, tmp_path / "worker.log")
    try:
        yield worker
    finally:
        worker.stop()
