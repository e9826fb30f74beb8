"""A Celery round trip through a real worker process on Redis (full mode):
the task runs in `celery -A loopguard_site worker` and reads the test database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import connection

from loopguard_site.health.tasks import ping
from loopguard_site.transcripts.services import session_create_from_events

REPO_ROOT = Path(__file__).resolve().parents[3]


def database_url(settings_dict: dict) -> str:
    """The DATABASE_URL of the test database pytest-django set up."""
    user = settings_dict["USER"] + (f":{settings_dict['PASSWORD']}" if settings_dict["PASSWORD"] else "")
    return f"postgres://{user}@{settings_dict['HOST']}:{settings_dict['PORT']}/{settings_dict['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_task_in_a_separate_worker_process_on_redis(live_services, settings, tmp_path):
    for title in ("first", "second"):
        session_create_from_events(title=title, model="m", source_format="events", parser_version="1", events=[])
    # A queue of its own, so no other worker on this Redis takes the task.
    queue = f"test-{uuid.uuid4().hex}"
    node = f"{queue}@{socket.gethostname()}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "REDIS_URL": settings.REDIS_URL,
        "LOOPGUARD_DATA_DIR": str(tmp_path),
    }
    log = tmp_path / "worker.log"
    with log.open("w") as output:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "loopguard_site", "worker", "--pool", "solo", "--queues", queue,
             "--hostname", node, "--without-heartbeat", "--without-mingle", "--without-gossip", "--loglevel", "INFO"],
            cwd=REPO_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            answer = ping.apply_async(queue=queue).get(timeout=60)
        finally:
            worker.send_signal(signal.SIGTERM)  # warm shutdown
            status = worker.wait(timeout=60)

    assert answer == {"pong": True, "worker": node, "sessions": 2}, log.read_text()
    assert status == 0, log.read_text()
