"""`POST /v1/responses` through a real lab process (full mode), with the
official `openai` package as the client and a stub upstream replaying a
looping fixture row as an OpenAI Responses stream: the client's stream ends
as a response cut short ends (the open text part and item done, the item
`incomplete`, then `response.incomplete` with the loop's reason) right after
the delta that completed the loop, the upstream is hung up on, and the
session is stored `stopped`; a normal row passes through and its session is
closed."""

from __future__ import annotations

import openai
import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session
from tests.api_stubs import (
    LONG,
    LOOP_FIXTURE,
    NORMAL_FIXTURE,
    assert_whole_loop_recorded,
    expected_stop,
    fixture_row,
    responses_object,
    responses_records,
    stored_events,
    without_id,
)
from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.openai_stub import StubUpstream, row_events

pytestmark = pytest.mark.django_db(transaction=True)

UPSTREAM_KEY = "sk-upstream-secret"


def proxied(lab, row: dict, stub: StubUpstream, token: str) -> openai.OpenAI:  # noqa: F811
    server = lab(LOOPGUARD_UPSTREAM_URL=stub.url, LOOPGUARD_UPSTREAM_KEY=UPSTREAM_KEY)
    return openai.OpenAI(base_url=server.url + "/v1", api_key=token, max_retries=0)


def stub_for(row: dict) -> StubUpstream:
    return StubUpstream(row, records=responses_records(row), whole=responses_object(row))


def test_a_looping_stream_ends_as_an_incomplete_response_and_the_upstream_is_hung_up_on(lab, token, user):  # noqa: F811
    row = fixture_row(LOOP_FIXTURE, LONG)
    index, stop = expected_stop(row)
    with stub_for(row) as stub:
        client = proxied(lab, row, stub, token)
        received = list(client.responses.create(model=row["model"], input="Describe the brand.", stream=True))
        assert stub.done.wait(timeout=60)

    # record 0 creates the response (event 0, the turn), record k + 3 holds delta k (event k)
    relayed, ending = received[:-4], received[-4:]
    assert [event.model_dump(exclude_none=True) for event in relayed] == [r for _, r in stub.chunks[: index + 4]]
    text = row["text"][: stop["at"]]
    assert "".join(e.delta for e in relayed if e.type == "response.output_text.delta") == text
    assert [(event.type, event.sequence_number) for event in ending] == [
        ("response.output_text.done", index + 4),
        ("response.content_part.done", index + 5),
        ("response.output_item.done", index + 6),
        ("response.incomplete", index + 7),
    ]
    assert (ending[0].text, ending[1].part.text) == (text, text)
    assert (ending[2].item.status, ending[2].item.content[0].text) == ("incomplete", text)
    response = ending[3].response
    assert (response.id, response.status, response.incomplete_details.reason) == (
        f"resp_{row['id']}",
        "incomplete",
        "loop_detected",
    )
    assert response.output_text == text
    session = Session.objects.get(uploader=user)
    loop = ending[3].model_extra["loopguard"]
    assert loop["session"] == session.pk
    assert without_id(loop["detection"]) == stop
    assert stub.hung_up and stub.sent < len(stub.chunks)
    assert stub.requests == [
        {
            "path": "/v1/responses",
            "authorization": f"Bearer {UPSTREAM_KEY}",
            "body": {"input": "Describe the brand.", "model": row["model"], "stream": True},
        }
    ]
    assert session.state == "stopped"
    assert [(d.pk, d.event_seq) for d in Detection.objects.filter(session=session, action="stop")] == [
        (loop["detection"]["id"], index + 1)
    ]
    assert stored_events(session)[: index + 1] == row_events(row)[: index + 1]


def test_a_normal_stream_passes_through_and_its_session_is_closed(lab, token, user):  # noqa: F811
    row = fixture_row(NORMAL_FIXTURE)
    with stub_for(row) as stub:
        client = proxied(lab, row, stub, token)
        received = list(client.responses.create(model=row["model"], input="Solve it.", stream=True))

    assert [event.model_dump(exclude_none=True) for event in received] == [r for _, r in stub.chunks]
    session = Session.objects.get(uploader=user)
    assert (session.state, stub.hung_up) == ("closed", False)
    assert stored_events(session) == [*row_events(row), {"type": "finish", "reason": "stop"}]


def test_a_whole_looping_response_is_incomplete_for_the_loop(lab, token, user):  # noqa: F811
    row = fixture_row(LOOP_FIXTURE)
    with stub_for(row) as stub:
        response = proxied(lab, row, stub, token).responses.create(model=row["model"], input="Describe the brand.")

    assert (response.output_text, response.status, response.incomplete_details.reason) == (
        row["text"],
        "incomplete",
        "loop_detected",
    )
    assert_whole_loop_recorded(user, response.model_extra["loopguard"], row)


def test_a_whole_normal_response_passes_through(lab, token, user):  # noqa: F811
    row = fixture_row(NORMAL_FIXTURE)
    with stub_for(row) as stub:
        response = proxied(lab, row, stub, token).responses.create(model=row["model"], input="Solve it.")

    assert response.model_dump(exclude_none=True) == responses_object(row)
    assert Session.objects.get(uploader=user).state == "closed"
