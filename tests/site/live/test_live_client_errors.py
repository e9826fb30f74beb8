"""What a producer's `LiveSession` hears from a real lab process (Daphne,
full mode) when the lab refuses: one error class per cause, the same over
the socket (close codes after an accept) and over HTTP (statuses)."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from detector.live_client import (
    LiveSession,
    MessageTooBig,
    NotAllowed,
    NotAuthenticated,
    QuotaUsedUp,
    SessionClosed,
    SessionNotFound,
)
from loopguard_site.transcripts.models import Event, Session

pytestmark = pytest.mark.django_db(transaction=True)

HELLO = {"type": "content", "text": "Hello. "}


def stored(session_id: int) -> list[dict]:
    return list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True))


@pytest.mark.parametrize(("transport", "codes"), [("ws", (4401, 4403, 4404, 4409)), ("http", (401, 403, 404, 409))])
def test_each_refusal_raises_its_own_error_with_its_code(lab, producer, outsider, transport, codes):
    server = lab()
    own = LiveSession(server.url, producer.token, transport="http").session_id
    closed = LiveSession(server.url, producer.token, transport="http")
    closed.close()
    cases = [
        (NotAuthenticated, "lg_wrong", own),
        (NotAllowed, outsider.token, own),  # a reviewer of the project, not the session's creator
        (SessionNotFound, producer.token, own + 1000),
        (SessionClosed, producer.token, closed.session_id),
    ]
    raised = []
    for kind, token, session_id in cases:
        client = LiveSession(server.url, token, session_id=session_id, transport=transport, retries=0, linger=0)
        with pytest.raises(kind) as caught:
            client.send(HELLO)
        raised.append(caught.value.status)
        client.disconnect()
    assert tuple(raised) == codes
    assert stored(own) == [] and stored(closed.session_id) == []


def test_a_socket_that_sends_invalid_utf8_is_dropped_and_nothing_of_the_message_is_stored(lab, producer):
    server = lab()
    session_id = LiveSession(server.url, producer.token, transport="http").session_id
    url = server.url.replace("http://", "ws://") + f"/ws/ingest/{session_id}"
    headers = {"Authorization": f"Bearer {producer.token}"}
    good = json.dumps({"seq": 1, "event": {"type": "content", "text": "naïve 循环 "}}, ensure_ascii=False)
    with connect(url, additional_headers=headers) as socket:
        assert json.loads(socket.recv(timeout=10)) == {"resume": 0}
        socket.send(good.encode(), text=True)
        assert json.loads(socket.recv(timeout=10)) == {"ack": 1}
        socket.send(b'{"seq": 2, "event": {"type": "content", "text": "\xed\xa0\x80"}}', text=True)
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    # autobahn fails a connection by dropping it (its `failByDrop`), with no close frame
    assert closed.value.rcvd is None and closed.value.sent is None, "\n".join(server.output)
    with connect(url, additional_headers=headers) as socket:
        assert json.loads(socket.recv(timeout=10)) == {"resume": 1}  # the bad message stored nothing


def test_a_message_over_the_size_limit_gets_an_error_then_close_1009(lab, producer):
    server = lab(LOOPGUARD_WS_MAX_MESSAGE_KB="64")
    session_id = LiveSession(server.url, producer.token, transport="http").session_id
    big = json.dumps({"seq": 1, "event": {"type": "content", "text": "x" * 96 * 1024}})  # past 64 KiB, under Daphne's
    url = server.url.replace("http://", "ws://") + f"/ws/ingest/{session_id}"
    with connect(url, additional_headers={"Authorization": f"Bearer {producer.token}"}) as socket:
        assert json.loads(socket.recv(timeout=10)) == {"resume": 0}
        socket.send(big)
        answer = json.loads(socket.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert answer["error"].startswith(f"message of {len(big)} bytes, over the limit of 65536 bytes")
    assert closed.value.rcvd.code == 1009, "\n".join(server.output)

    # the client drops the message it cannot send and goes on, numbering the next one in its place
    live = LiveSession(server.url, producer.token, session_id=session_id, window=1, linger=0)
    with pytest.raises(MessageTooBig) as too_big:
        live.send({"type": "content", "text": "x" * 96 * 1024})
    assert (too_big.value.status, too_big.value.seq) == (1009, 1)
    live.send(HELLO)
    live.flush()
    assert (live.acked, live.pending) == (1, {})
    assert stored(session_id) == [HELLO]
    live.disconnect()


def test_a_used_up_quota_raises_with_retry_after_and_keeps_the_message(lab, producer):
    server = lab(LOOPGUARD_TOKEN_DAILY_QUOTA="3")
    # Creating it was call 1. The lab asks for waits of 1, 2, 4, 8 s (backoff): those that fit
    # in the client's timeout are waited and the message sent again, the first longer one raises.
    live = LiveSession(server.url, producer.token, window=1, linger=0, timeout=5)
    live.send(HELLO)
    live.send(HELLO)
    with pytest.raises(QuotaUsedUp) as caught:
        live.send({"type": "content", "text": "late"})
    assert caught.value.seq == 3 and 5 < caught.value.retry_after <= 24 * 3600
    assert live.pending == {3: [{"type": "content", "text": "late"}]}  # to go again once the wait is over
    assert stored(live.session_id) == [HELLO, HELLO]
    assert Session.objects.get(pk=live.session_id).state == "live"
    live.disconnect()
