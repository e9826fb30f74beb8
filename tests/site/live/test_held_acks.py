"""Protocol 3 (`?protocol=3`, which `LiveSession` asks for) against the real
ASGI application: the `resume` says so; the ack of stored messages is held,
covering every message stored meanwhile, until a message asks for it
(`"ack_now": true`, on a message or alone), a refusal or a close comes, or
the socket's timer sends it
(`answers.ACK_HOLD_SECONDS`); the viewer gets every event, in order,
whatever the acks. And what `LiveSession` asks for: its ack at once for the
messages it is going to wait for."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from detector.live_client import LiveSession
from loopguard_site.asgi import application
from loopguard_site.live import consumers
from loopguard_site.transcripts.models import Event

from .conftest import TIMEOUT, connected, receive, viewer_socket

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS = [{"type": "content", "text": f"part {n}. "} for n in range(1, 8)]
GAP = "seq 7 leaves a gap: the next message is 5"


def held_socket(session, who) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/ingest/{session.pk}?protocol=3", headers=who.headers)


def message(seq: int, **more: object) -> dict:
    return {"seq": seq, "event": EVENTS[seq - 1], **more}


def test_the_ack_is_held_until_a_message_asks_for_it_a_refusal_or_the_close(
    live_services, live_session, producer, monkeypatch
):
    monkeypatch.setattr(consumers, "ACK_HOLD_SECONDS", 3 * TIMEOUT)  # the timer never fires here

    async def scenario() -> tuple[list[list[dict]], list[dict]]:
        viewer = viewer_socket(live_session, producer)
        assert await connected(viewer) == {"state": "live"}
        socket = held_socket(live_session, producer)
        assert await connected(socket) == {"resume": 0, "protocol": 3}
        answers = []
        for seq in (1, 2):
            await socket.send_json_to(message(seq))
        assert await socket.receive_nothing(timeout=0.5)  # stored (the viewer's frames below), not acknowledged
        await socket.send_json_to(message(3, ack_now=True))
        answers.append(await receive(socket, 1))
        await socket.send_json_to(message(4))
        await socket.send_json_to(message(7))
        answers.append(await receive(socket, 2))
        await socket.send_json_to(message(5))
        await socket.send_json_to({"ack_now": True})
        answers.append(await receive(socket, 1))
        await socket.send_json_to(message(6))
        await socket.send_json_to({"close": True})
        answers.append([await socket.receive_json_from(timeout=TIMEOUT) for _ in range(2)])
        assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 1000}
        seen = await receive(viewer, 1)
        while sum(len(frame.get("events", ())) for frame in seen) < 6:
            seen += await receive(viewer, 1)
        for each in (socket, viewer):
            await each.disconnect()
        return answers, seen

    answers, seen = async_to_sync(scenario)()

    assert answers == [
        [{"ack": 3}],  # covers 1 and 2, held until 3 asked
        [{"ack": 4}, {"error": GAP, "field": "seq", "seq": 7}],  # the held ack before the refusal
        [{"ack": 5}],  # asked for alone
        [{"ack": 6}, {"state": "closed"}],  # before the close's answer
    ]
    events = [event for frame in seen for event in frame.get("events", ())]
    assert events == [{**EVENTS[n - 1], "seq": n} for n in range(1, 7)]
    assert seen[-1] == {"state": "closed"}
    stored = Event.objects.filter(session=live_session).order_by("seq").values_list("data", flat=True)
    assert list(stored) == EVENTS[:6]


def test_the_socket_s_timer_sends_the_held_ack(live_services, live_session, producer, monkeypatch):
    monkeypatch.setattr(consumers, "ACK_HOLD_SECONDS", 1.0)

    async def scenario() -> list[dict]:
        socket = held_socket(live_session, producer)
        assert await connected(socket) == {"resume": 0, "protocol": 3}
        for seq in (1, 2):
            await socket.send_json_to(message(seq))
        answers = await receive(socket, 1)  # within TIMEOUT: the timer's, nothing asked for it
        await socket.disconnect()
        return answers

    assert async_to_sync(scenario)() == [{"ack": 2}]


class HoldingLab:
    """A lab socket speaking protocol 3, for `LiveSession`: it stores each
    message at once and holds the ack unless a message (or a bare
    `ack_now`) asks for it; a client
    that waits with nothing queued gets the held ack as the lab's timer
    would send it (counted in `timer_acks`)."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.queued = [{"resume": 0, "protocol": 3}]
        self.stored = 0
        self.timer_acks = 0

    def __call__(self, url: str, **_: object) -> HoldingLab:  # as websockets.sync.client.connect
        self.url = url
        return self

    def __enter__(self) -> HoldingLab:
        return self

    def send(self, text: str) -> None:
        sent = json.loads(text)
        self.sent.append(sent)
        self.stored = sent.get("seq", self.stored)
        if sent.get("ack_now") or sent.get("close"):
            self.queued.append({"ack": self.stored})
        if sent.get("close"):
            self.queued.append({"state": "closed"})

    def recv(self, timeout: float) -> str:
        if self.queued:
            return json.dumps(self.queued.pop(0))
        if timeout == 0:
            raise TimeoutError
        self.timer_acks += 1
        return json.dumps({"ack": self.stored})

    def close(self) -> None:
        pass


def test_live_session_asks_for_its_ack_at_once_only_when_it_is_going_to_wait(monkeypatch):
    import websockets.sync.client

    lab = HoldingLab()
    monkeypatch.setattr(websockets.sync.client, "connect", lab)
    live = LiveSession("http://lab.test:8000", "token", session_id=7, linger=60, window=4)
    text = {"type": "content", "text": "x"}
    call = {"type": "tool_call", "name": "search", "arguments": "{}"}

    live.send(text)  # batched: nothing sent
    live.send(call)  # a tool call goes at once, asking
    live.send(text)
    live.flush()  # sends the batch, asking, and waits for its ack
    live.linger = 0  # from here one message a send
    for _ in range(3):
        live.send(text)
    live.flush()  # nothing left to send: asks for the ack of 5 alone
    live.send(text)
    live.close()  # the close's answer carries the held ack: nothing waits for the timer

    assert "protocol=3" in lab.url
    assert lab.sent == [
        {"seq": 1, "events": [text, call], "ack_now": True},
        {"seq": 2, "events": [text], "ack_now": True},
        {"seq": 3, "events": [text]},
        {"seq": 4, "events": [text], "ack_now": True},  # half the window (2 of 4) unacknowledged
        {"seq": 5, "events": [text]},
        {"ack_now": True},
        {"seq": 6, "events": [text]},
        {"close": True},
    ]
    assert (live.acked, live.pending, lab.timer_acks) == (6, {}, 0)
