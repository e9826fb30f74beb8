"""Limits at their edges: a token's daily quota (429 with the backoff's
Retry-After), events per session on import, and the WebSocket message size."""

from __future__ import annotations

import datetime
import json

import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from loopguard_site.asgi import application
from loopguard_site.transcripts.services import session_create_live
from tests.members import member, project_token

NOON = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)


def token_client(user) -> tuple[Client, str]:
    _, token = project_token(user=user, name="limits")
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}"), token


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("producer"))


@pytest.mark.django_db
def test_a_token_gets_its_quota_then_429_with_backing_off_retry_after(settings, user):
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 3
    api, _ = token_client(user)
    other, _ = token_client(user)
    with time_machine.travel(NOON, tick=False) as clock:
        assert [api.get("/api/sessions").status_code for _ in range(3)] == [200, 200, 200]
        refused = [api.get("/api/sessions") for _ in range(5)]
        assert [r.status_code for r in refused] == [429] * 5
        assert [r["Retry-After"] for r in refused] == ["1", "2", "4", "8", "16"]
        assert json.loads(refused[0].content)["error"] == (
            "this token's daily quota is used up (LOOPGUARD_TOKEN_DAILY_QUOTA)"
        )
        assert other.get("/api/sessions").status_code == 200  # each token has its own
        clock.move_to(NOON + datetime.timedelta(hours=12))  # midnight: a new day
        assert [api.get("/api/sessions").status_code for _ in range(4)] == [200, 200, 200, 429]
        assert api.get("/api/sessions")["Retry-After"] == "2"


@pytest.mark.django_db
def test_the_openai_compatible_proxy_counts_against_the_same_quota(settings, user):
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 3
    api, _ = token_client(user)
    with time_machine.travel(NOON, tick=False):
        assert api.get("/api/sessions").status_code == 200
        # a body without a model is refused by the proxy itself, after the quota counted the call
        answers = [api.post("/v1/chat/completions", {}, content_type="application/json") for _ in range(4)]
        assert [r.status_code for r in answers] == [400, 400, 429, 429]
        assert [r.get("Retry-After") for r in answers] == [None, None, "1", "2"]
        assert json.loads(answers[2].content)["error"]["type"] == "rate_limit_error"
        assert json.loads(answers[2].content)["error"]["message"] == (
            "this token's daily quota is used up (LOOPGUARD_TOKEN_DAILY_QUOTA)"
        )
        assert api.get("/api/sessions")["Retry-After"] == "4"  # one count for both doors


@pytest.mark.django_db
def test_retry_after_never_passes_midnight(settings, user):
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 1
    api, _ = token_client(user)
    with time_machine.travel(NOON.replace(hour=23, minute=59, second=57), tick=False):
        assert api.get("/api/sessions").status_code == 200
        assert [api.get("/api/sessions")["Retry-After"] for _ in range(4)] == ["1", "2", "3", "3"]


@pytest.mark.django_db
def test_the_browser_session_is_not_counted(settings, client, user):
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 1
    client.force_login(user)
    assert [client.get("/api/sessions").status_code for _ in range(3)] == [200, 200, 200]


def events_body(count: int, *, header: bool = True) -> bytes:
    """A transcript of exactly `count` events, after its `session` header if `header`."""
    lines = [{"type": "session"}] if header else []
    lines += [{"type": "turn"}, *({"type": "content", "text": f"{n}\n"} for n in range(count - 1))]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.mark.django_db
@pytest.mark.parametrize("header", [True, False])
def test_an_import_over_the_events_limit_is_refused(settings, user, header):
    """The limit counts the file's events; its header (made up when it has
    none) is not one: a file of exactly the limit imports."""
    settings.LOOPGUARD_MAX_EVENTS = 5
    api, _ = token_client(user)
    ok = api.post("/api/sessions?format=events", events_body(5, header=header), content_type="application/x-ndjson")
    refused = api.post(
        "/api/sessions?format=events&filename=big.jsonl",
        events_body(6, header=header),
        content_type="application/x-ndjson",
    )
    assert ok.status_code == 201 and json.loads(ok.content)["sessions"][0]["events"] == 6
    assert refused.status_code == 400
    assert json.loads(refused.content)["errors"] == [
        {"file": "big.jsonl", "line": None, "field": None,
         "message": "6 events, over the limit of 5 events per session (LOOPGUARD_MAX_EVENTS)"}
    ]  # fmt: skip


def padded_message(size: int) -> str:
    """An ingest message of exactly `size` bytes."""
    empty = json.dumps({"seq": 1, "event": {"type": "content", "text": ""}})
    return json.dumps({"seq": 1, "event": {"type": "content", "text": "x" * (size - len(empty))}})


async def ingest_exchange(session_id: int, token: str, message: str, *, closes: bool) -> tuple[list[dict], dict]:
    """What the ingest socket answers to `message`: its JSON messages up to
    an ack or an error, then (`closes`) the output after them."""
    communicator = WebsocketCommunicator(
        application, f"/ws/ingest/{session_id}", headers=[(b"authorization", f"Bearer {token}".encode())]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    await communicator.send_to(text_data=message)
    answers = []
    while not answers or not ({"ack", "error"} & answers[-1].keys()):
        answers.append(json.loads(await communicator.receive_from(timeout=10)))
    after = await communicator.receive_output(timeout=10) if closes else {}
    await communicator.disconnect()
    return answers, after


@pytest.mark.django_db(transaction=True)
def test_the_ingest_socket_takes_a_message_at_the_size_limit_and_closes_on_one_byte_more(settings, user):
    settings.LOOPGUARD_WS_MAX_MESSAGE_BYTES = 200
    _, token = token_client(user)
    session = session_create_live(model="m", title="limits", uploader=user, tags=[])
    assert len(padded_message(200).encode()) == 200

    answers, _ = async_to_sync(ingest_exchange)(session.pk, token, padded_message(200), closes=False)
    assert answers[-1] == {"ack": 1}

    answers, after = async_to_sync(ingest_exchange)(session.pk, token, padded_message(201), closes=True)
    assert answers[-1] == {
        "error": "message of 201 bytes, over the limit of 200 bytes (LOOPGUARD_WS_MAX_MESSAGE_KB)",
        "field": None,
        "seq": None,
        "limit": 200,
    }
    assert after == {"type": "websocket.close", "code": 1009}


async def socket_answer(session_id: int, token: str, message: dict) -> dict:
    communicator = WebsocketCommunicator(
        application, f"/ws/ingest/{session_id}", headers=[(b"authorization", f"Bearer {token}".encode())]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    assert "resume" in await communicator.receive_json_from(timeout=10)
    await communicator.send_json_to(message)
    answer = await communicator.receive_json_from(timeout=10)
    await communicator.disconnect()
    return answer


@pytest.mark.django_db(transaction=True)
def test_live_ingest_over_the_events_limit_is_refused_over_http_and_the_socket(settings, user):
    settings.LOOPGUARD_MAX_EVENTS = 5
    api, token = token_client(user)
    session = session_create_live(model="m", title="limits", uploader=user, tags=[])
    turn_and_four = [{"type": "turn"}, *({"type": "content", "text": f"{n}\n"} for n in range(4))]
    one_more = {"type": "content", "text": "5\n"}

    ok = api.post(f"/api/sessions/{session.pk}/events", {"seq": 1, "events": turn_and_four}, "application/json")
    refused = api.post(f"/api/sessions/{session.pk}/events", {"seq": 2, "events": [one_more]}, "application/json")
    over_socket = async_to_sync(socket_answer)(session.pk, token, {"seq": 2, "event": one_more})

    assert (ok.status_code, json.loads(ok.content)["ack"]) == (200, 1)
    error = "1 more events would make 6, over the limit of 5 events per session (LOOPGUARD_MAX_EVENTS)"
    assert refused.status_code == 413
    assert json.loads(refused.content) == {"error": error, "field": "events", "line": None}
    assert over_socket == {"error": error, "field": "events", "seq": 2}
    session.refresh_from_db()
    assert session.event_count == 5


@pytest.mark.django_db(transaction=True)
def test_a_producer_socket_past_its_tokens_quota_is_refused_with_retry_after_and_nothing_stored(settings, user):
    """The socket's messages count in the token's daily quota (in Redis, with
    its HTTP calls); a refused message stores nothing and the socket stays usable."""
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 3
    api, token = token_client(user)
    session = session_create_live(model="m", title="quota", uploader=user, tags=[])
    hello = {"type": "content", "text": "Hello. "}

    async def scenario() -> list[dict]:
        communicator = WebsocketCommunicator(
            application, f"/ws/ingest/{session.pk}", headers=[(b"authorization", f"Bearer {token}".encode())]
        )
        assert (await communicator.connect(timeout=10))[0]
        assert await communicator.receive_json_from(timeout=10) == {"resume": 0}
        answers = []
        for seq in (1, 2, 3, 4, 4):
            await communicator.send_json_to({"seq": seq, "event": hello})
            answers.append(await communicator.receive_json_from(timeout=10))
        await communicator.disconnect()
        return answers

    answers = async_to_sync(scenario)()
    after = api.get("/api/sessions")

    def refused(retry_after: int) -> dict:
        error = f"this token's daily quota is used up (LOOPGUARD_TOKEN_DAILY_QUOTA); retry in {retry_after} s"
        return {"error": error, "field": None, "seq": 4, "retry_after": retry_after}

    assert answers == [{"ack": 1}, {"ack": 2}, {"ack": 3}, refused(1), refused(2)]
    assert (after.status_code, after["Retry-After"]) == (429, "4")
    session.refresh_from_db()
    assert session.event_count == 3


def test_the_quota_counter_starts_at_the_days_first_calls_expires_after_two_days_and_adds_in_one_round_trip(
    live_services, settings, monkeypatch
):
    import redis.client
    from django.core.cache import cache, caches

    from loopguard_site.accounts.quota import KEEP_SECONDS, token_quota_take_many

    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 10
    key = f"lg:quota:counted-test:{NOON.date().isoformat()}"
    cache.delete(key)
    sent = []  # per round trip: the commands
    pipelined, single = redis.client.Pipeline.execute, redis.client.Redis.execute_command
    monkeypatch.setattr(redis.client.Pipeline, "execute", lambda self: sent.append(len(self)) or pipelined(self))
    monkeypatch.setattr(
        redis.client.Redis, "execute_command", lambda self, *args, **kw: sent.append(1) or single(self, *args, **kw)
    )

    first = token_quota_take_many(token_key="counted-test", calls=4, now=NOON)
    second = token_quota_take_many(token_key="counted-test", calls=4, now=NOON)
    third = token_quota_take_many(token_key="counted-test", calls=4, now=NOON)
    monkeypatch.undo()

    assert (first, second) == ((4, None), (4, None))
    assert third[0] == 2  # the quota's last two
    assert sent == [2, 2, 2, 2]  # one round trip (of two commands) a count; the third counts its refusals too
    name = caches["default"].make_and_validate_key(key)
    assert cache.get(key) == 12
    assert KEEP_SECONDS - 5 <= caches["default"]._cache.get_client(name).ttl(name) <= KEEP_SECONDS
    cache.delete(key)
    cache.delete(f"lg:quota-refused:counted-test:{NOON.date().isoformat()}")
