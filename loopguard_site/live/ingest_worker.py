"""Group commit for the producer sockets of a process.

Each process has one ingest thread. A producer socket's message goes into
its queue; the thread takes every message waiting there (from all the
process's sockets, up to MAX_BATCH), stores them with one
`live_ingest_batch` (one transaction, one durable commit), and hands each
socket its outcome. Messages that arrive while a batch is written make the
next batch, so the busier the sockets, the bigger the batches; and a
message waits up to GATHER_SECONDS from its receipt for others to join it,
so that at a rate the server keeps up with a batch still holds several
(a batch's round trips to PostgreSQL and Redis, its commit and its hand-over
to the loop cost the server more than a one-event message's own work:
BENCHMARKS.md, section 4). The thread keeps its database connection between
batches (channels' `database_sync_to_async` would open one per message with
CONN_MAX_AGE = 0, and run all sockets' calls on one shared thread) and
closes it after IDLE_SECONDS without a message (and collects garbage then,
see `collect_if_grown`). Once the batch committed,
its messages go to their viewers all at once (`forward_to_viewers`, one
Redis round trip for the batch, one channel-layer message a session), on
the sockets' event loop (the server's: its channel-layer connections are
there), and then each socket hears the outcomes of all its messages of the
batch at once (`ProducerSocketAnswers.answered`): one hand-over to the loop
a batch, and a socket that sent several messages meanwhile answers them
together (one ack, protocol 2). A socket does not wait for a message to be
stored before it reads its next one.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import queue
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from django.db import connection

from loopguard_site.errors import FieldError

from .messages import forward_to_viewers
from .services import IngestRequest, IngestResult, live_ingest_batch

log = logging.getLogger(__name__)

MAX_BATCH = 2000  # messages a batch takes at most
GATHER_SECONDS = 0.01  # a message waits at most this long from its receipt for others to share its batch
IDLE_SECONDS = 1.0  # an idle thread closes its database connection after this
IDLE_COLLECT_GROWTH = 0.1  # an idle thread collects garbage once long-lived objects grew by this fraction

Outcome = IngestResult | FieldError | Exception  # an exception: the server failed the message


class ProducerSocketAnswers(Protocol):
    async def answered(self, outcomes: Sequence[tuple[IngestRequest, Outcome]]) -> None:
        """The outcomes of the socket's messages that one batch stored, in the order they were submitted."""


_Job = tuple[IngestRequest, ProducerSocketAnswers, asyncio.AbstractEventLoop, float]  # float: received (monotonic)
_Answer = tuple[IngestRequest, ProducerSocketAnswers, Outcome]


class IngestWorker:
    """The ingest thread of the process, started with its first message."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._long_lived = 0  # objects in the collector's oldest generation after the last idle collection

    def submit(self, request: IngestRequest, socket: ProducerSocketAnswers) -> None:
        """Queue a message of a socket served by the running event loop; once
        stored and forwarded to the viewers (or refused), the socket hears
        its outcome, with those of its other messages of the same batch."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="live-ingest", daemon=True)
                self._thread.start()
            self._jobs.put((request, socket, asyncio.get_running_loop(), time.monotonic()))

    def stop(self) -> None:
        """Finish the messages queued, close the database connection, end the
        thread (the next message starts another)."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._jobs.put(None)
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                connection.close()
                self.collect_if_grown()
                continue
            jobs: list[_Job] = []
            gathered_by = job[3] + GATHER_SECONDS if job is not None else 0.0
            while job is not None:
                jobs.append(job)
                if len(jobs) == MAX_BATCH:
                    break
                try:
                    job = self._jobs.get(timeout=max(0.0, gathered_by - time.monotonic()))
                except queue.Empty:
                    break
            self._store(jobs)
            if job is None:
                connection.close()
                return

    def collect_if_grown(self) -> bool:
        """A full garbage collection while no message waits, if the oldest
        generation grew by IDLE_COLLECT_GROWTH since the last one here;
        whether it ran. A full pass walks every long-lived object (sockets,
        Monitors): 100-150 ms of a core at 500 producers, while the process
        serves no socket. CPython starts one once that generation grew by a
        quarter, so a burst of new sockets brings one under load; started
        here, it falls in a pause instead."""
        if len(gc.get_objects(generation=2)) <= self._long_lived * (1 + IDLE_COLLECT_GROWTH):
            return False
        gc.collect()
        self._long_lived = len(gc.get_objects(generation=2))
        return True

    def _store(self, jobs: list[_Job]) -> None:
        try:
            outcomes: list = live_ingest_batch([request for request, *_ in jobs])
        except Exception as exc:  # the database failed the batch: every socket of it hears so
            log.exception("a live ingest batch of %d messages failed", len(jobs))
            connection.close()  # a broken connection is replaced with the next batch
            outcomes = [exc] * len(jobs)
        by_loop: dict[asyncio.AbstractEventLoop, list[_Answer]] = {}
        for (request, socket, loop, _), outcome in zip(jobs, outcomes, strict=True):
            by_loop.setdefault(loop, []).append((request, socket, outcome))
        for loop, answers in by_loop.items():
            try:
                asyncio.run_coroutine_threadsafe(_forward_and_answer(answers), loop)
            except RuntimeError:  # the loop is closed: its sockets are gone, no one waits for an answer
                pass


ingest_worker = IngestWorker()


async def _forward_and_answer(answers: list[_Answer]) -> None:
    """Forward a batch's stored messages to their viewers, then answer each
    socket its messages' outcomes. A forward that fails (Redis unreachable)
    fails the messages it carried: stored but not acknowledged, the producer
    resends them and gets them acknowledged (a duplicate is stored no second
    time)."""
    forwarded = [index for index, (_, _, outcome) in enumerate(answers) if _has_viewer_texts(outcome)]
    try:
        if forwarded:
            await forward_to_viewers([(answers[i][0].session_id, answers[i][2].viewer_texts) for i in forwarded])
    except Exception as exc:  # noqa: BLE001 - whatever it was, those sockets hear it
        for index in forwarded:
            answers[index] = (*answers[index][:2], exc)
    by_socket: dict[ProducerSocketAnswers, list[tuple[IngestRequest, Outcome]]] = {}
    for request, socket, outcome in answers:
        by_socket.setdefault(socket, []).append((request, outcome))
    for socket, outcomes in by_socket.items():
        try:
            await socket.answered(outcomes)
        except Exception:  # one socket's failure is not its batch neighbours'
            log.exception("answering a producer socket failed")


def _has_viewer_texts(outcome: Outcome) -> bool:
    return isinstance(outcome, IngestResult) and bool(outcome.viewer_texts)
