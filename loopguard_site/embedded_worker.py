"""A real Celery worker inside the lab process, for the embedded mode.

It consumes kombu's in-process `memory://` broker from a daemon thread, with
a thread pool, exactly as a separate worker would consume Redis: tasks are
serialized, queued, acknowledged and their results stored (not run eagerly).
Signal handling stays with the main thread (Daphne's reactor); `stop()` asks
the worker for a warm shutdown through Celery's own shutdown flag.
"""

from __future__ import annotations

import os
import socket
import threading

from celery import Celery
from celery.result import _set_task_join_will_block
from celery.worker import WorkController, state

START_TIMEOUT = 30.0  # seconds for the consumer to come up
STOP_TIMEOUT = 60.0  # seconds for running tasks to finish on a warm shutdown


class _Controller(WorkController):
    def __init__(self, *args, **kwargs):
        self.ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer) -> None:
        self.ready.set()


class EmbeddedWorker:
    def __init__(self, app: Celery, *, threads: int):
        self.app = app
        self.threads = threads
        self.hostname = f"embedded-{os.getpid()}@{socket.gethostname()}"
        self._controller: _Controller | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start consuming; returns once the worker takes tasks."""
        self.app.set_current()
        self._controller = _Controller(
            app=self.app,
            hostname=self.hostname,
            pool="threads",
            concurrency=self.threads,
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
        )
        self._thread = threading.Thread(target=self._controller.start, name="celery-embedded-worker", daemon=True)
        self._thread.start()
        if not self._controller.ready.wait(START_TIMEOUT):
            raise RuntimeError(f"the embedded Celery worker did not start within {START_TIMEOUT:.0f} s")
        # The worker marks the process as one where result.get() would block a
        # task; web code in this process is no task, so let it wait for results.
        _set_task_join_will_block(False)

    def stop(self) -> None:
        """Warm shutdown: finish running tasks, then return."""
        if not self.running:
            return
        state.should_stop = 0  # exit status 0; checked by the consumer loop between messages
        # The consumer loop waits up to 2 s for a message, sees the flag, then
        # waits once more before it exits (celery.worker.loops.synloop): two
        # control messages end both waits at once.
        for _ in range(2):
            self.app.control.broadcast("ping", destination=[self.hostname], reply=False)
        try:
            self._thread.join(STOP_TIMEOUT)
            if self._thread.is_alive():
                raise RuntimeError(f"the embedded Celery worker did not stop within {STOP_TIMEOUT:.0f} s")
        finally:
            state.should_stop = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
