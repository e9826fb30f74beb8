"""A real `loopguard lab` process for clients that need a server on a port
(the Python live client, the OpenAI SDK through the proxy): full mode, on
the pytest test database and the test Redis, so rows a test writes (it needs
`django_db(transaction=True)`) are the lab's rows and the other way round.

`start_lab(tmp_path, **env)` returns a `Lab` whose output is drained by a
thread (a full pipe would block the server); the `lab` fixture gives a
factory and stops every lab it started with Ctrl-C (SIGINT).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, database_url

LOOPGUARD = Path(sys.executable).with_name("loopguard")  # the console script pip installed
START_TIMEOUT = 120  # seconds the lab may take to migrate and listen


@dataclass
class Lab:
    url: str  # http://127.0.0.1:PORT (no trailing slash)
    process: subprocess.Popen
    output: list[str] = field(default_factory=list)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=60)


def start_lab(data_dir: Path, **env: str) -> Lab:
    from django.conf import settings
    from django.db import connection

    process = subprocess.Popen(
        [LOOPGUARD, "lab", "--port", "0"],
        env={
            **os.environ,
            "DATABASE_URL": database_url(connection.settings_dict),
            "REDIS_URL": settings.REDIS_URL,
            "LOOPGUARD_DATA_DIR": str(data_dir),
            **env,
        },
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    output: list[str] = []
    urls: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            if line.startswith("LoopGuard lab: http://"):
                urls.put(line.removeprefix("LoopGuard lab: ").strip().rstrip("/"))
        urls.put(None)  # the lab exited

    threading.Thread(target=drain, daemon=True).start()
    try:
        url = urls.get(timeout=START_TIMEOUT)
    except queue.Empty:
        url = None
    if url is None:
        process.kill()
        raise AssertionError(f"the lab did not start: {output}")
    return Lab(url, process, output)


@pytest.fixture
def lab(live_services, tmp_path) -> Iterator[Callable[..., Lab]]:
    """`lab(**env)`: a running lab (see `start_lab`), stopped after the test."""
    started: list[Lab] = []

    def start(**env: str) -> Lab:
        started.append(start_lab(tmp_path, **env))
        return started[-1]

    yield start
    for each in started:
        each.stop()
