"""`POST /v1/messages` through a real lab process (full mode), with the
official `anthropic` package as the client and a stub upstream replaying a
looping fixture row as an Anthropic Messages stream: the client's stream
ends as an Anthropic message ends (the open block stopped, a message_delta
whose stop_reason is the loop's, message_stop) right after the delta that
completed the loop, the upstream is hung up on, and the session is stored
`stopped`; a normal row passes through and its session is closed."""

from __future__ import annotations

import anthropic
import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session
from tests.api_stubs import (
    LONG,
    LOOP_FIXTURE,
    NORMAL_FIXTURE,
    anthropic_message,
    anthropic_records,
    assert_whole_loop_recorded,
    expected_stop,
    fixture_row,
    stored_events,
    without_id,
)
from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.openai_stub import StubUpstream, row_events

pytestmark = pytest.mark.django_db(transaction=True)

UPSTREAM_KEY = "sk-ant-upstream-secret"
MESSAGES = [{"role": "user", "content": "Describe the brand."}]


def stub_for(row: dict) -> StubUpstream:
    return StubUpstream(row, records=anthropic_records(row), whole=anthropic_message(row))


def proxied(lab, stub: StubUpstream, token: str) -> anthropic.Anthropic:  # noqa: F811
    server = lab(LOOPGUARD_ANTHROPIC_UPSTREAM_URL=stub.url, LOOPGUARD_ANTHROPIC_UPSTREAM_KEY=UPSTREAM_KEY)
    return anthropic.Anthropic(base_url=server.url, api_key=token, max_retries=0)


def test_a_looping_stream_ends_as_a_message_ends_and_the_upstream_is_hung_up_on(lab, token, user):  # noqa: F811
    row = fixture_row(LOOP_FIXTURE, LONG)
    index, stop = expected_stop(row)
    with stub_for(row) as stub:
        client = proxied(lab, stub, token)
        received = list(client.messages.create(model=row["model"], max_tokens=4096, messages=MESSAGES, stream=True))
        assert stub.done.wait(timeout=60)

    # record 0 starts the message (event 0, the turn), record k + 2 holds delta k (event k)
    relayed, ending = received[:-3], received[-3:]
    assert [event.type for event in relayed] == [kind for kind, _ in stub.chunks[: index + 3] if kind != "ping"]
    assert relayed[0].message.id == f"msg_{row['id']}"
    assert "".join(e.delta.text for e in relayed if e.type == "content_block_delta") == row["text"][: stop["at"]]
    assert [event.type for event in ending] == ["content_block_stop", "message_delta", "message_stop"]
    assert ending[0].index == 0
    assert (ending[1].delta.stop_reason, ending[1].usage.output_tokens) == ("loop_detected", 1)
    session = Session.objects.get(uploader=user)
    loop = ending[1].model_extra["loopguard"]
    assert loop["session"] == session.pk
    assert without_id(loop["detection"]) == stop
    assert stub.hung_up and stub.sent < len(stub.chunks)
    [request] = stub.requests
    assert request["path"] == "/v1/messages"
    assert request["body"] == {"max_tokens": 4096, "messages": MESSAGES, "model": row["model"], "stream": True}
    assert stub.headers[0]["x-api-key"] == UPSTREAM_KEY  # the proxy's key, never the client's token
    assert stub.headers[0]["anthropic-version"] == client.default_headers["anthropic-version"]  # passed on
    assert (session.state, session.model) == ("stopped", row["model"])
    assert [(d.pk, d.event_seq, d.at) for d in Detection.objects.filter(session=session, action="stop")] == [
        (loop["detection"]["id"], index + 1, stop["at"])
    ]
    assert stored_events(session)[: index + 1] == row_events(row)[: index + 1]


def test_a_normal_stream_passes_through_and_its_session_is_closed(lab, token, user):  # noqa: F811
    row = fixture_row(NORMAL_FIXTURE)
    with stub_for(row) as stub:
        client = proxied(lab, stub, token)
        received = list(client.messages.create(model=row["model"], max_tokens=4096, messages=MESSAGES, stream=True))

    assert [event.type for event in received] == [
        kind for kind, _ in stub.chunks if kind != "ping"
    ]  # the SDK drops pings
    assert "".join(e.delta.text for e in received if e.type == "content_block_delta") == row["text"]
    assert received[-2].delta.stop_reason == "end_turn"
    session = Session.objects.get(uploader=user)
    assert (session.state, stub.hung_up) == ("closed", False)
    assert stored_events(session) == [*row_events(row), {"type": "finish", "reason": "stop"}]


def test_a_whole_looping_message_gets_the_loop_stop_reason(lab, token, user):  # noqa: F811
    row = fixture_row(LOOP_FIXTURE)
    with stub_for(row) as stub:
        message = proxied(lab, stub, token).messages.create(model=row["model"], max_tokens=4096, messages=MESSAGES)

    assert (message.content[0].text, message.stop_reason) == (row["text"], "loop_detected")
    assert_whole_loop_recorded(user, message.model_extra["loopguard"], row)


def test_a_whole_normal_message_passes_through(lab, token, user):  # noqa: F811
    row = fixture_row(NORMAL_FIXTURE)
    with stub_for(row) as stub:
        message = proxied(lab, stub, token).messages.create(model=row["model"], max_tokens=4096, messages=MESSAGES)

    assert message.model_dump(exclude_none=True) == {
        key: value for key, value in anthropic_message(row).items() if value is not None
    }
    assert Session.objects.get(uploader=user).state == "closed"


def test_a_client_without_a_loopguard_token_gets_an_anthropic_error(lab, token):  # noqa: F811
    row = fixture_row(NORMAL_FIXTURE)
    with stub_for(row) as stub:
        client = proxied(lab, stub, "sk-ant-not-a-loopguard-token")
        with pytest.raises(anthropic.AuthenticationError) as caught:
            client.messages.create(model=row["model"], max_tokens=10, messages=MESSAGES)

    assert caught.value.status_code == 401
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "authentication_error",
            "message": "authentication required: use a LoopGuard API token as the API key",
        },
    }
    assert stub.requests == []
    assert not Session.objects.exists()
