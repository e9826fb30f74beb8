"""Random producers against live ingest (issue 9, hardening): whatever a
client sends — bytes, any JSON, events with wrong types, unstorable text,
sequence numbers out of order — the lab answers with an ack or a clean
error: no 500 over HTTP, no unhandled exception in the socket's consumer.

2,000 cases in all: 1,800 single messages through `POST
/api/sessions/<id>/events` (the same parser and service as the socket), each
into a fresh session, and 200 runs of one to three messages through
`/ws/ingest/<id>` itself, where sequence numbers carry over."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopguard_site.asgi import application
from loopguard_site.transcripts.services import session_create_live
from tests.members import member, project_token

FUZZ = settings(
    deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
TYPES = ["session", "turn", "user", "reasoning", "content", "tool_call", "tool_result", "finish", "bogus", ""]
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# strings PostgreSQL cannot store, as JSON escapes (a JSON text, not a Python str, can hold them)
UNSTORABLE = ["\\u0000", "\\ud800", "a\\udfffb", "\\ud83d"]


@st.composite
def events(draw) -> dict:
    event = {"type": draw(st.sampled_from(TYPES))}
    fields = {
        "text": st.text(max_size=40) | ANY_JSON,
        "name": st.text(max_size=10) | ANY_JSON,
        "args": st.dictionaries(st.text(max_size=6), ANY_JSON, max_size=3) | ANY_JSON,
        "id": st.text(max_size=6) | ANY_JSON,
        "ok": st.booleans() | ANY_JSON,
        "output": st.text(max_size=20) | ANY_JSON,
        "reason": st.sampled_from(["stop", "length", "tool_calls"]) | ANY_JSON,
        "t": st.floats(allow_nan=False) | ANY_JSON,
        "model": st.text(max_size=10) | ANY_JSON,
    }
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True)):
        event[name] = draw(fields[name])
    return event


@st.composite
def messages(draw) -> bytes:
    """One producer message, as the bytes sent (on a fresh socket or session, seq 1 is next)."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind == 1:
        return json.dumps(draw(ANY_JSON)).encode()
    seq = draw(st.sampled_from([1, 1, 2, 0, -1, "1", None, 1.5, True, 2**70]))
    body: dict = {"seq": seq}
    if draw(st.booleans()):
        body["events"] = draw(st.lists(events(), max_size=5))
    else:
        body["event"] = draw(events())
    if draw(st.integers(0, 9)) == 0:
        body["close"] = draw(st.sampled_from([True, False, 1, "yes"]))
    text = json.dumps(body)
    if kind == 2:  # an escape the database refuses, inside the first string value
        text = text.replace('": "', '": "' + draw(st.sampled_from(UNSTORABLE)), 1)
    return text.encode()


@pytest.fixture
def producer(django_user_model):
    user = member(django_user_model.objects.create_user("producer"))
    _, token = project_token(user=user, name="fuzz")
    return user, token


@pytest.mark.django_db
def test_http_ingest_answers_every_message_without_a_server_error(producer):
    user, token = producer
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)

    @settings(FUZZ, max_examples=1800)
    @given(messages())
    def check(body):
        session = session_create_live(model="fuzz", title="fuzz", uploader=user, tags=[])
        response = api.post(f"/api/sessions/{session.pk}/events", body, content_type="application/json")
        answer = json.loads(response.content)
        assert response.status_code in (200, 400, 409, 413), (response.status_code, answer, body)
        if response.status_code == 200:
            assert set(answer) == {"ack", "detections", "state"}, answer
        else:
            assert isinstance(answer["error"], str) and answer["error"], answer

    check()


async def socket_exchange(session_id: int, token: str, bodies: list[bytes]) -> list[dict]:
    """Send each body (as text when it is UTF-8); every one must get its
    answer (ack, error or state) before the next, or the socket closes."""
    communicator = WebsocketCommunicator(
        application, f"/ws/ingest/{session_id}", headers=[(b"authorization", f"Bearer {token}".encode())]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    assert "resume" in json.loads(await communicator.receive_from(timeout=10))
    answers = []
    for body in bodies:
        try:  # send_input, not send_to: an empty frame is a case too
            await communicator.send_input({"type": "websocket.receive", "text": body.decode("utf-8")})
        except UnicodeDecodeError:
            await communicator.send_input({"type": "websocket.receive", "bytes": body})
        while True:
            output = await communicator.receive_output(timeout=10)  # re-raises a consumer's exception
            if output["type"] == "websocket.close":
                await communicator.wait()
                return [*answers, {"closed": output.get("code")}]
            answer = json.loads(output["text"])
            if {"ack", "error", "state"} & answer.keys():
                answers.append(answer)
                break
    await communicator.disconnect()
    return answers


@pytest.mark.django_db(transaction=True)
def test_the_ingest_socket_answers_every_message_and_never_crashes(producer):
    user, token = producer

    @settings(FUZZ, max_examples=200)
    @given(st.lists(messages(), min_size=1, max_size=3))
    def check(bodies):
        session = session_create_live(model="fuzz", title="fuzz", uploader=user, tags=[])
        answers = async_to_sync(socket_exchange)(session.pk, token, bodies)
        assert answers, bodies
        for answer in answers:
            assert "ack" in answer or "state" in answer or "closed" in answer or answer["error"], answer

    check()
