"""`POST /v1/traces` refusals, in the request's encoding (a google.rpc.Status
as the OTLP specification asks): no token, the daily quota used up (each
export counts), an unknown encoding, a body that is not an export, a gzip
body that expands past the upload limit; and spans of a trace whose root
already ended (its session is closed) are refused in `partial_success`
while the other traces of the export are stored."""

from __future__ import annotations

import gzip
import json

import pytest

from loopguard_site.transcripts.models import Session
from tests.api_stubs import stored_events
from tests.members import member, project_token

pytestmark = pytest.mark.django_db

JSON = "application/json"


@pytest.fixture
def token(django_user_model) -> str:
    return project_token(user=member(django_user_model.objects.create_user("agent")))[1]


def span(trace: str, span_id: str, parent: str, text: str, start: int) -> dict:
    """An OTLP JSON span: a chat span answering `text`, or an agent span when `text` is empty."""
    attributes = {"gen_ai.operation.name": "invoke_agent"}
    if text:
        output = [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}]
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
        attributes["gen_ai.output.messages"] = json.dumps(output)
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": "chat" if text else "invoke_agent",
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str((start + 1) * 10**9),
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()],
    }


def export(*spans: dict) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


def post(client, body: bytes, token: str | None, content_type: str = JSON, **headers: str):
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return client.post("/v1/traces", body, content_type=content_type, headers=headers)


TRACE, OTHER = "5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"


def test_without_a_token_the_export_is_refused_in_its_encoding(client):
    answer = post(client, export(span(TRACE, "a1", "", "Hi", 1)), None)
    assert (answer.status_code, answer.json()) == (
        401,
        {"code": 16, "message": "authentication required: send 'Authorization: Bearer <LoopGuard API token>'"},
    )
    protobuf = post(client, b"x", None, content_type="application/x-protobuf")
    message = b"authentication required: send 'Authorization: Bearer <LoopGuard API token>'"
    assert (protobuf.status_code, protobuf["Content-Type"]) == (401, "application/x-protobuf")
    assert protobuf.content == b"\x08\x10\x12" + bytes([len(message)]) + message  # Status{code: 16, message}
    assert not Session.objects.exists()


def test_each_export_counts_in_the_token_quota(client, token, settings):
    settings.LOOPGUARD_TOKEN_DAILY_QUOTA = 1
    assert post(client, export(span(TRACE, "a1", "x", "Hi", 1)), token).status_code == 200
    refused = post(client, export(span(TRACE, "a2", "x", "Hi again", 2)), token)
    assert (refused.status_code, refused["Retry-After"], refused.json()["code"]) == (429, "1", 8)
    assert [event.get("text") for event in stored_events(Session.objects.get())] == [None, "Hi", None]


NOT_PROTOBUF = "the body is not an ExportTraceServiceRequest in protobuf: Error parsing message"
NOT_JSON = "the body is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "status", "message"),
    [
        (b"{}", "text/plain", None, 415,
         "Content-Type must be application/x-protobuf or application/json, not 'text/plain'"),
        (b"[1]", JSON, None, 400, "the body must be an ExportTraceServiceRequest: a JSON object with resourceSpans"),
        (b"{", JSON, None, 400, NOT_JSON),
        (b"{}", JSON, "br", 415, "Content-Encoding 'br' is not supported: send gzip, deflate or none"),
        (b"{}", JSON, "gzip", 400,
         "the body is not valid gzip: Error -3 while decompressing data: incorrect header check"),
        (b"\xff\xff", "application/x-protobuf", None, 400, NOT_PROTOBUF),
    ],
)  # fmt: skip
def test_a_body_that_is_not_an_export_is_refused_naming_why(
    client, token, body, content_type, encoding, status, message
):
    headers = {"Content-Encoding": encoding} if encoding else {}
    answer = post(client, body, token, content_type=content_type, **headers)
    if content_type == JSON:
        assert (answer.status_code, answer.json()["message"]) == (status, message)
    else:
        assert answer.status_code == status
        assert message.encode() in answer.content
    assert not Session.objects.exists()


def test_a_gzip_body_expanding_past_the_upload_limit_is_refused(client, token, settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = 10_000
    body = gzip.compress(export(span(TRACE, "a1", "", "x" * 20_000, 1)))
    answer = post(client, body, token, **{"Content-Encoding": "gzip"})
    assert (answer.status_code, answer.json()["message"]) == (
        413,
        "the body expands past 10000 bytes (LOOPGUARD_UPLOAD_MAX_MB)",
    )


def test_spans_of_an_ended_trace_are_refused_and_the_other_traces_stored(client, token):
    first = post(client, export(span(TRACE, "b1", "a1", "First answer.", 1), span(TRACE, "a1", "", "", 0)), token)
    late = post(client, export(span(TRACE, "b2", "a1", "Late answer.", 2), span(OTHER, "c1", "", "Other.", 3)), token)

    ended, other = Session.objects.order_by("pk")
    assert first.json()["loopguard"]["traces"][0]["state"] == "closed"  # its root span came
    assert late.status_code == 200
    assert late.json()["partialSuccess"] == {
        "rejectedSpans": 1,
        "errorMessage": f"trace {TRACE} (LoopGuard session {ended.pk}): 1 spans refused:"
        f" session {ended.pk} is closed: it takes no events",
    }
    assert [trace["rejected"] for trace in late.json()["loopguard"]["traces"]] == [1, 0]
    assert [event.get("text") for event in stored_events(ended)] == [None, "First answer.", None]
    assert [event.get("text") for event in stored_events(other)] == [None, "Other.", None]
    assert (other.title, other.state) == (f"trace {OTHER}", "closed")


def test_a_span_without_a_trace_id_is_refused_in_partial_success(client, token):
    answer = post(client, export({**span(TRACE, "a1", "", "Hi", 1), "traceId": ""}), token)
    assert (answer.status_code, answer.json()["partialSuccess"]) == (
        200,
        {"rejectedSpans": 1, "errorMessage": "trace (none): 1 spans refused: a span without a traceId"},
    )
    assert not Session.objects.exists()
