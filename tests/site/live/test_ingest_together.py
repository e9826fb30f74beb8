"""Messages of one socket that the ingest thread stores together: held back
behind the session's row lock while the first is stored, then stored as one
batch. Protocol 2 acknowledges them with one ack naming the highest (the
first batch's ack, answered while they were in flight, rides on it),
protocol 1 with one each; either way the
viewer gets each batch's events in one frame, in order, and every event is
stored once."""

from __future__ import annotations

import asyncio
import threading

import psycopg
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.db import connection, transaction

from loopguard_site.asgi import application
from loopguard_site.live.services import _locked_stream
from loopguard_site.transcripts.models import Event
from tests.conftest import database_url

from .conftest import connected, receive, viewer_socket

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS = [{"type": "content", "text": f"part {n}. "} for n in range(1, 5)]
WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
    " AND wait_event_type = 'Lock' AND query LIKE '%%FOR UPDATE OF m%%'"
)


def numbered(first: int, last: int) -> list[dict]:
    return [{**EVENTS[seq - 1], "seq": seq} for seq in range(first, last + 1)]


@pytest.mark.parametrize(
    ("query", "acks"),
    [
        ("?protocol=2", [{"ack": 4}]),
        ("", [{"ack": 1}, {"ack": 2}, {"ack": 3}, {"ack": 4}]),  # a client of the first protocol
    ],
)
def test_messages_stored_together_share_one_ack_and_one_viewer_frame(
    live_services, live_session, producer, query, acks
):
    locked, release = threading.Event(), threading.Event()

    def hold_the_session() -> None:
        try:
            with transaction.atomic():
                _locked_stream(live_session.pk)
                locked.set()
                release.wait(60)
        finally:
            connection.close()

    async def scenario(watcher) -> tuple[list[dict], list[dict]]:
        viewer = viewer_socket(live_session, producer)
        assert await connected(viewer) == {"state": "live"}
        socket = WebsocketCommunicator(application, f"/ws/ingest/{live_session.pk}{query}", headers=producer.headers)
        assert await connected(socket) == {"resume": 0}
        await socket.send_json_to({"seq": 1, "event": EVENTS[0]})
        while watcher.execute(WAITING).fetchone() == (0,):  # the ingest thread waits for the lock with message 1
            await asyncio.sleep(0.02)
        for seq in (2, 3, 4):
            await socket.send_json_to({"seq": seq, "event": EVENTS[seq - 1]})
        assert await socket.receive_nothing(timeout=0.3)  # nothing stored while the lock is held
        release.set()
        answers = await receive(socket, len(acks))
        seen = await receive(viewer, 2)
        for each in (socket, viewer):
            await each.disconnect()
        return answers, seen

    holder = threading.Thread(target=hold_the_session)
    holder.start()
    try:
        assert locked.wait(60)
        with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as watcher:
            answers, seen = async_to_sync(scenario)(watcher)
    finally:
        release.set()
        holder.join()

    assert answers == acks
    assert seen == [{"events": numbered(1, 1)}, {"events": numbered(2, 4)}]
    assert list(Event.objects.filter(session=live_session).order_by("seq").values_list("seq", "data")) == list(
        enumerate(EVENTS, 1)
    )
