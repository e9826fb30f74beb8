"""Between the sockets of one producer (`LiveSession` names itself and
counts its connections in the socket's query string) only a later connection
takes the session over: a connect the producer gave up on, served after its
next one (by a busier lab process behind the same proxy, whose own clock
then reads later), must not close the socket the producer streams on. Other
producers' sockets still go by when the lab began serving them."""

from __future__ import annotations

import time

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from loopguard_site.asgi import application
from loopguard_site.live.messages import send_producer_taken
from loopguard_site.live.protocol import ProducerSocket, producer_socket

from .conftest import TIMEOUT, connected

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_producers_earlier_connection_served_later_does_not_take_its_socket_over(
    live_services, live_session, producer
):
    async def scenario() -> tuple:
        path = f"/ws/ingest/{live_session.pk}?producer=p1&connection=2"
        socket = WebsocketCommunicator(application, path, headers=producer.headers)
        await connected(socket)
        later = time.time() + 5
        await send_producer_taken(live_session.pk, "its-first-connect", ProducerSocket("p1", 1, later))
        await socket.send_json_to({"seq": 1, "event": {"type": "content", "text": "still here"}})
        answer = await socket.receive_json_from(timeout=TIMEOUT)
        await send_producer_taken(live_session.pk, "its-third-connect", ProducerSocket("p1", 3, later))
        closing = await socket.receive_output(timeout=TIMEOUT)
        await socket.disconnect()
        return answer, closing

    assert async_to_sync(scenario)() == ({"ack": 1}, {"type": "websocket.close", "code": 4409})


def test_the_takeover_rule():
    mine = ProducerSocket("p1", 2, since=100.0)

    assert not mine.replaced_by(ProducerSocket("p1", 1, since=200.0))
    assert not mine.replaced_by(ProducerSocket("p1", 2, since=200.0))
    assert mine.replaced_by(ProducerSocket("p1", 3, since=50.0))
    assert mine.replaced_by(ProducerSocket("p2", 1, since=100.0))
    assert not mine.replaced_by(ProducerSocket("p2", 9, since=99.0))
    assert ProducerSocket(None, None, since=100.0).replaced_by(ProducerSocket(None, None, since=100.5))
    assert not ProducerSocket(None, None, since=100.0).replaced_by(ProducerSocket(None, 7, since=99.5))


def test_the_producer_and_connection_of_a_query_string():
    assert producer_socket(b"producer=ab12&connection=3", 1.0) == ProducerSocket("ab12", 3, 1.0)
    assert producer_socket(b"", 1.0) == ProducerSocket(None, None, 1.0)
    assert producer_socket(b"producer=&connection=-1", 1.0) == ProducerSocket(None, None, 1.0)
    assert producer_socket(b"producer=x&connection=99999999999", 1.0) == ProducerSocket("x", None, 1.0)
    assert producer_socket(b"producer=" + b"y" * 100, 1.0) == ProducerSocket("y" * 64, None, 1.0)


def test_the_client_names_itself_and_counts_its_connections(monkeypatch):
    import websockets.sync.client

    from detector.live_client import LiveSession, LiveSessionError

    urls = []

    def refused(url: str, **_: object):
        urls.append(url)
        raise ConnectionRefusedError("no lab")

    monkeypatch.setattr(websockets.sync.client, "connect", refused)
    live = LiveSession("http://lab.test:8000", "token", session_id=7, retries=2, linger=0)
    with pytest.raises(LiveSessionError, match="lost the ingest socket 3 times in a row"):
        live.send({"type": "content", "text": "x"})

    producer = urls[0].split("producer=")[1].split("&")[0]
    assert len(producer) == 16
    assert urls == [f"ws://lab.test:8000/ws/ingest/7?producer={producer}&connection={n}&protocol=3" for n in (1, 2, 3)]
    assert LiveSession("http://lab.test:8000", "token", session_id=7)._producer != producer
