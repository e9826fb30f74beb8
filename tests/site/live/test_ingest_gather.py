"""A message waits up to GATHER_SECONDS from its receipt for others to share
its batch: messages received within that time are stored together and
answered together; one received later makes the next batch."""

from __future__ import annotations

import asyncio

import pytest

from loopguard_site.live import ingest_worker
from loopguard_site.live.ingest_worker import IngestWorker
from loopguard_site.live.services import IngestRequest, IngestResult

HELLO = {"type": "content", "text": "Hello"}


class Socket:
    def __init__(self) -> None:
        self.answers: list[list[int]] = []

    async def answered(self, outcomes) -> None:
        self.answers.append([outcome.ack for _, outcome in outcomes])


@pytest.mark.parametrize(("gather_seconds", "batches"), [(1.0, [[1, 2], [3]]), (0.0, [[1], [2], [3]])])
def test_messages_received_within_the_gather_time_share_a_batch(monkeypatch, gather_seconds, batches):
    stored: list[list[int]] = []

    def store(requests):
        stored.append([request.seq for request in requests])
        return [IngestResult(ack=request.seq, state="live") for request in requests]

    monkeypatch.setattr(ingest_worker, "live_ingest_batch", store)
    monkeypatch.setattr(ingest_worker, "GATHER_SECONDS", gather_seconds)
    worker, socket = IngestWorker(), Socket()

    async def answered(count: int) -> None:
        while sum(map(len, socket.answers)) < count:
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        worker.submit(IngestRequest(1, 1, [HELLO]), socket)
        await asyncio.sleep(0.2)  # well within 1 s of the first
        worker.submit(IngestRequest(1, 2, [HELLO]), socket)
        await answered(2)
        worker.submit(IngestRequest(1, 3, [HELLO]), socket)  # after the first batch: the next one
        await answered(3)

    try:
        asyncio.run(scenario())
    finally:
        worker.stop()
    assert [batch for batch in stored if batch] == batches
    assert socket.answers == batches
