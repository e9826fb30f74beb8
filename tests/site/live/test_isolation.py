"""One bad message fails alone: in a batch, over a socket with other
projects' producers streaming, and nested past LOOPGUARD_MAX_JSON_DEPTH."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync

from loopguard_site.accounts.models import Project, Role
from loopguard_site.errors import FieldError
from loopguard_site.live.services import IngestRequest, IngestResult, live_ingest_batch
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_live
from tests.members import member, project_token

from .conftest import TIMEOUT, Account, connected, ingest_socket


def content(text: str) -> dict:
    return {"type": "content", "text": text}


def nested(levels: int) -> dict:
    """A tool call whose arguments nest `levels` objects deep."""
    args: dict = {}
    for _ in range(levels - 1):
        args = {"a": args}
    return {"type": "tool_call", "name": "search", "args": args, "id": "c1"}


def stored(session: Session) -> list[tuple[int, dict]]:
    return list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "data"))


@pytest.mark.django_db
def test_a_message_that_raises_in_a_detector_fails_alone_and_its_session_goes_on(producer):
    """600 levels of arguments raise RecursionError in the tool-call key
    (past the protocol's depth check, as a bug in a detector would)."""
    first, second = (session_create_live(model="m", uploader=producer.user) for _ in range(2))
    requests = [
        IngestRequest(first.pk, 1, [content("a1")]),
        IngestRequest(second.pk, 1, [content("b1")]),
        IngestRequest(first.pk, 2, [content("a2"), nested(600)]),
        IngestRequest(second.pk, 2, [content("b2")]),
        IngestRequest(first.pk, 2, [content("a2"), {"type": "tool_call", "name": "search", "args": {}, "id": "c1"}]),
        IngestRequest(first.pk, 3, [content("a3")]),
    ]

    outcomes = live_ingest_batch(requests)

    failed = outcomes[2]
    assert isinstance(failed, FieldError)
    assert (failed.field, failed.status) == ("events[1]", 422)
    assert str(failed).startswith("seq 2: events[1] could not be processed (RecursionError")
    assert [(o.ack, o.duplicate) for o in outcomes if isinstance(o, IngestResult)] == [
        (1, False),
        (1, False),
        (2, False),
        (2, False),
        (3, False),
    ]
    assert stored(first) == [
        (1, content("a1")),
        (2, content("a2")),
        (3, {"type": "tool_call", "name": "search", "args": {}, "id": "c1"}),
        (4, content("a3")),
    ]
    assert stored(second) == [(1, content("b1")), (2, content("b2"))]
    first.refresh_from_db()
    assert first.event_count == 4
    # the next batch's Monitor (rebuilt from what is stored) goes on from event 5
    [later] = live_ingest_batch([IngestRequest(first.pk, 4, [content("a4")])])
    assert later.ack == 4
    assert stored(first)[-1] == (5, content("a4"))


@pytest.mark.django_db(transaction=True)
def test_a_deep_message_from_another_project_disconnects_none_of_twenty_producers(
    live_services, producer, django_user_model
):
    other_project = Project.objects.create(name="other")
    stranger_user = member(django_user_model.objects.create_user("stranger"), Role.REVIEWER, project=other_project)
    stranger = Account(stranger_user, project_token(user=stranger_user, name="t", project=other_project)[1])
    sessions = [session_create_live(model="m", uploader=producer.user) for _ in range(20)]
    theirs = session_create_live(model="m", uploader=stranger_user, project=other_project)
    deep = json.dumps({"seq": 1, "event": nested(600)})
    messages = 10

    async def produce(session: Session) -> list[dict]:
        socket = ingest_socket(session, producer)
        answers = [await connected(socket)]
        for seq in range(1, messages + 1):
            await socket.send_json_to({"seq": seq, "event": content(f"{session.pk}.{seq} ")})
            answers.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.disconnect()
        return answers

    async def attack() -> list[dict]:
        socket = ingest_socket(theirs, stranger)
        answers = [await connected(socket)]
        for _ in range(3):
            await socket.send_to(text_data=deep)
            answers.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.send_json_to({"seq": 1, "event": content("fine")})
        answers.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.disconnect()
        return answers

    async def scenario():
        return await asyncio.gather(attack(), *(produce(s) for s in sessions))

    attacked, *produced = async_to_sync(scenario)()

    refusal = {
        "error": "JSON nested deeper than 64 levels at event.args" + ".a" * 62 + " (LOOPGUARD_MAX_JSON_DEPTH)",
        "field": "event.args" + ".a" * 62,
        "seq": 1,
    }
    assert attacked == [{"resume": 0}, refusal, refusal, refusal, {"ack": 1}]
    assert produced == [[{"resume": 0}] + [{"ack": seq} for seq in range(1, messages + 1)]] * 20
    for session in sessions:
        assert [data["text"] for _, data in stored(session)] == [
            f"{session.pk}.{seq} " for seq in range(1, messages + 1)
        ]
    assert [data for _, data in stored(theirs)] == [content("fine")]


@pytest.mark.django_db(transaction=True)
def test_a_late_announced_older_connect_does_not_take_a_newer_socket_over(live_services, producer):
    """A connect served late (a storm) announces its takeover after the
    producer's newer socket: the newer one stays; a newer announcement closes it."""
    import time

    from loopguard_site.live.messages import send_producer_taken
    from loopguard_site.live.protocol import ProducerSocket

    session = session_create_live(model="m", uploader=producer.user)

    async def scenario() -> tuple:
        socket = ingest_socket(session, producer)
        await connected(socket)
        await send_producer_taken(session.pk, "an-older-connect", ProducerSocket(None, None, time.time() - 5))
        await socket.send_json_to({"seq": 1, "event": content("still here")})
        answer = await socket.receive_json_from(timeout=TIMEOUT)
        await send_producer_taken(session.pk, "a-newer-connect", ProducerSocket(None, None, time.time() + 5))
        closing = await socket.receive_output(timeout=TIMEOUT)
        await socket.disconnect()
        return answer, closing

    assert async_to_sync(scenario)() == ({"ack": 1}, {"type": "websocket.close", "code": 4409})
