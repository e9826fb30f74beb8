"""`POST /v1/chat/completions` through a real lab process (full mode), with
the official `openai` package as the client and a stub upstream replaying
real corpus rows: a looping stream ends with a `loop_detected` chunk right
after the chunk that completed the loop, the upstream is hung up on, and
the session is stored `stopped` with its detection; a normal row passes
through unchanged and its session is closed."""

from __future__ import annotations

import openai
import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session
from tests.api_stubs import expected_stop, stored_events, without_id
from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.openai_stub import DELTA_SIZE, StubUpstream, corpus_row, openai_chunks, row_events

pytestmark = pytest.mark.django_db(transaction=True)

LOOP_ROW = "ae-chatglm2-ascii-wall"  # ChatGLM2-6B draws one box wall for 24,000 characters
NORMAL_ROW = "ae-gpt4turbo-sudoku-grids"  # repeated grid lines, not a loop
LONG_NORMAL_ROW = "doc-alpaca-eval-readme"  # 84,461 characters: 21,117 chunks, far more than any buffer
UPSTREAM_KEY = "sk-upstream-secret"
MESSAGES = [{"role": "user", "content": "Can you make ASCII art?"}]


def proxied(lab, stub: StubUpstream, token: str, **env: str) -> openai.OpenAI:  # noqa: F811
    server = lab(LOOPGUARD_UPSTREAM_URL=stub.url, LOOPGUARD_UPSTREAM_KEY=UPSTREAM_KEY, **env)
    return openai.OpenAI(base_url=server.url + "/v1", api_key=token, max_retries=0)


def plain(chunk) -> dict:
    """An SDK chunk as the upstream sent it (the SDK adds null fields)."""
    data = chunk.model_dump(exclude_none=True)
    for choice in data["choices"]:
        choice.setdefault("finish_reason", None)
        choice.setdefault("logprobs", None)
    return data


@pytest.mark.parametrize("finish_reason", ["loop_detected", "content_filter"])
def test_a_looping_stream_ends_with_the_loop_chunk_and_the_upstream_is_hung_up_on(lab, token, user, finish_reason):  # noqa: F811
    row = corpus_row(LOOP_ROW)
    index, stop = expected_stop(row)
    env = {} if finish_reason == "loop_detected" else {"LOOPGUARD_PROXY_FINISH_REASON": finish_reason}
    with StubUpstream(row) as stub:
        client = proxied(lab, stub, token, **env)
        received = list(client.chat.completions.create(model=row["model"], messages=MESSAGES, stream=True))
        assert stub.done.wait(timeout=60)

    # chunk 0 holds the role (a turn event), chunk k the k-th delta (event k): chunks 0..index, then the loop chunk
    assert [plain(c) for c in received[:-1]] == stub.chunks[: index + 1]
    # The relayed text ends with the delta in which the loop's evidence is complete.
    assert (index - 1) * DELTA_SIZE < stop["at"] <= index * DELTA_SIZE
    assert "".join(c.choices[0].delta.content or "" for c in received) == row["text"][: index * DELTA_SIZE]
    last = received[-1]
    assert (last.id, last.model, last.choices[0].finish_reason) == (received[0].id, row["model"], finish_reason)
    assert last.choices[0].delta.content is None
    session = Session.objects.get(uploader=user)
    assert last.model_extra["loopguard"]["session"] == session.pk
    assert without_id(last.model_extra["loopguard"]["detection"]) == stop
    assert stub.hung_up and stub.sent < len(stub.chunks)  # closed long before the upstream's 6,115 chunks
    assert stub.requests == [
        {
            "path": "/v1/chat/completions",
            "authorization": f"Bearer {UPSTREAM_KEY}",  # the proxy's key, never the client's token
            "body": {"messages": MESSAGES, "model": row["model"], "stream": True},
        }
    ]
    assert (session.state, session.model, session.title) == ("stopped", row["model"], f"proxy {row['model']}")
    stops = Detection.objects.filter(session=session, action="stop")
    assert [(d.pk, d.event_seq, d.at) for d in stops] == [
        (last.model_extra["loopguard"]["detection"]["id"], index + 1, stop["at"])
    ]
    assert stored_events(session)[: index + 1] == row_events(row)[: index + 1]


def test_a_normal_stream_passes_through_unchanged_and_its_session_is_closed(lab, token, user):  # noqa: F811
    row = corpus_row(NORMAL_ROW)
    with StubUpstream(row) as stub:
        client = proxied(lab, stub, token)
        received = list(client.chat.completions.create(model=row["model"], messages=MESSAGES, stream=True))
        assert stub.done.wait(timeout=60)

    assert [plain(c) for c in received] == openai_chunks(row)
    assert received[-1].choices[0].finish_reason == "stop"
    assert (stub.hung_up, stub.sent) == (False, len(stub.chunks))
    session = Session.objects.get(uploader=user)
    assert (session.state, session.event_count) == ("closed", len(row_events(row)) + 1)
    assert stored_events(session) == [*row_events(row), {"type": "finish", "reason": "stop"}]
    assert not Detection.objects.filter(session=session, action="stop").exists()


def test_a_client_that_hangs_up_mid_stream_makes_the_proxy_hang_up_upstream(lab, token, user):  # noqa: F811
    row = corpus_row(LONG_NORMAL_ROW)
    with StubUpstream(row) as stub:
        client = proxied(lab, stub, token)
        stream = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
        first = [next(stream) for _ in range(3)]
        stream.close()
        assert stub.done.wait(timeout=60)

    assert [c.choices[0].delta.content for c in first] == ["", row["text"][:4], row["text"][4:8]]
    assert stub.hung_up and stub.sent < len(stub.chunks)
    assert Session.objects.get(uploader=user).state == "live"  # left for the stalled sweep


def test_a_whole_looping_completion_gets_the_loop_finish_reason(lab, token, user):  # noqa: F811
    row = corpus_row(LOOP_ROW)
    with StubUpstream(row) as stub:
        completion = proxied(lab, stub, token).chat.completions.create(model=row["model"], messages=MESSAGES)

    assert completion.choices[0].message.content == row["text"]  # answered whole: nothing to cut
    assert completion.choices[0].finish_reason == "loop_detected"
    session = Session.objects.get(uploader=user)
    detection = completion.model_extra["loopguard"]["detection"]
    assert (detection["action"], detection["detector"], completion.model_extra["loopguard"]["session"]) == (
        "stop",
        "text_loop",
        session.pk,
    )
    assert session.state == "stopped"
    assert stored_events(session) == [
        {"type": "turn"},
        {"type": "content", "text": row["text"]},
        {"type": "finish", "reason": "stop"},
    ]


def test_a_whole_normal_completion_passes_through(lab, token, user):  # noqa: F811
    row = corpus_row(NORMAL_ROW)
    with StubUpstream(row) as stub:
        completion = proxied(lab, stub, token).chat.completions.create(model=row["model"], messages=MESSAGES)

    assert (completion.choices[0].message.content, completion.choices[0].finish_reason) == (row["text"], "stop")
    assert "loopguard" not in (completion.model_extra or {})
    assert Session.objects.get(uploader=user).state == "closed"


def test_a_client_without_a_loopguard_token_is_refused(lab, token):  # noqa: F811
    row = corpus_row(NORMAL_ROW)
    with StubUpstream(row) as stub:
        client = proxied(lab, stub, "sk-not-a-loopguard-token")
        with pytest.raises(openai.AuthenticationError) as caught:
            client.chat.completions.create(model=row["model"], messages=MESSAGES, stream=True)

    assert caught.value.status_code == 401
    assert caught.value.body == {
        "message": "authentication required: use a LoopGuard API token as the API key",
        "type": "auth_error",
        "param": None,
        "code": None,
    }
    assert stub.requests == []
    assert not Session.objects.exists()
