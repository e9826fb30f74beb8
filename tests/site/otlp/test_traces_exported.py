"""`POST /v1/traces` through a real lab process (full mode), fed by the
OpenTelemetry SDK and its OTLP/HTTP exporters as an application sends them:
an agent's trace (GenAI semantic conventions: an `invoke_agent` root, `chat`
spans whose output calls a tool, failing `execute_tool` spans), from the
tool-loop demo fixture, becomes one live session with the fixture's events
in order and the detections a Monitor finds in them, whether each span is
its own protobuf export or the whole trace one gzipped OTLP JSON export; the
trace's root span closes the session. A looping answer's detection reaches
the sender in the export's answer and the session's viewer over its socket."""

from __future__ import annotations

import json

import httpx
import pytest
from opentelemetry.exporter.otlp.common.http import Compression
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as encode_json_spans
from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter as JsonExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as ProtobufExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, set_span_in_context
from websockets.sync.client import connect

from detector.config import builtin_config
from detector.monitor import Monitor
from loopguard_site.otlp.models import TraceSession
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session
from tests.api_stubs import FIXTURES, LOOP_FIXTURE, fixture_row, stored_events
from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.members import member, project_token

pytestmark = pytest.mark.django_db(transaction=True)

T0 = 1_760_000_000 * 10**9  # the agent's start, in nanoseconds since the epoch
SECOND = 10**9
PROMPT = "Look at ChatView.tsx and tell me what the chat view renders."


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("agent"))


@pytest.fixture
def token(user) -> str:
    return project_token(user=user, name="otlp tests")[1]


def tool_loop() -> tuple[str, list[dict]]:
    """The tool-loop fixture's model and its calls: (call, failing result) pairs."""
    events = [json.loads(line) for line in (FIXTURES / "loop-tools-readmediafile.jsonl").read_text().splitlines()]
    calls = [event for event in events if event["type"] == "tool_call"]
    results = [event for event in events if event["type"] == "tool_result"]
    return events[0]["model"], list(zip(calls, results, strict=True))


def chat_attributes(model: str, input_messages: list, output_messages: list, finish: str) -> dict:
    """A GenAI semantic-conventions chat span's attributes."""
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "moonshot",
        "gen_ai.request.model": model,
        "gen_ai.input.messages": json.dumps(input_messages),
        "gen_ai.output.messages": json.dumps(output_messages),
        "gen_ai.response.finish_reasons": (finish,),
    }


def run_agent(provider: TracerProvider) -> str:
    """The fixture's agent run as spans: turn k's chat span starts at 10k + 1
    seconds, its tool span at 10k + 6; the trace id, as hex."""
    tracer = provider.get_tracer("agent")
    model, pairs = tool_loop()
    root = tracer.start_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}, start_time=T0)
    context = set_span_in_context(root)
    history = [{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]
    for turn, (call, result) in enumerate(pairs):
        part = {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["args"]}
        output = [{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}]
        start = T0 + (10 * turn + 1) * SECOND
        chat = tracer.start_span(
            f"chat {model}",
            context=context,
            attributes=chat_attributes(model, history, output, "tool_calls"),
            start_time=start,
        )
        chat.end(end_time=start + 4 * SECOND)
        tool = tracer.start_span(
            f"execute_tool {call['name']}",
            context=context,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.call.result": result["output"],
            },
            start_time=start + 5 * SECOND,
        )
        tool.set_status(Status(StatusCode.ERROR, "not a media file"))
        tool.end(end_time=start + 6 * SECOND)
        response = {"type": "tool_call_response", "id": call["id"], "response": result["output"]}
        history += [*output, {"role": "tool", "parts": [response]}]
    root.end(end_time=T0 + 50 * SECOND)
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def expected_events() -> list[dict]:
    model, pairs = tool_loop()
    events: list[dict] = [{"type": "user", "text": PROMPT, "t": 0.0}]
    for turn, (call, result) in enumerate(pairs):
        t = 10.0 * turn
        events += [
            {"type": "turn", "t": t},
            {"type": "tool_call", "name": call["name"], "args": call["args"], "id": call["id"], "t": t},
            {"type": "finish", "reason": "tool_calls", "t": t},
            {"type": "tool_result", "id": call["id"], "ok": False, "output": result["output"], "t": t + 5},
        ]
    return events


def monitor_detections(model: str, events: list[dict]) -> list[tuple]:
    """(detector, type, action, event seq) of what a plain Monitor of the model's profile finds."""
    monitor = Monitor(builtin_config().select(model=model).name)
    return [
        (d.detector, d.type, d.action, seq) for seq, event in enumerate(events, 1) for d in monitor.feed(dict(event))
    ]


def stored_detections(session: Session) -> list[tuple]:
    rows = Detection.objects.filter(session=session).order_by("event_seq", "id")
    return [(d.detector, d.type, d.action, d.event_seq) for d in rows]


def assert_agent_session(user, trace_id: str) -> None:
    model, _ = tool_loop()
    session = Session.objects.get(uploader=user)
    assert TraceSession.objects.get(session=session).trace_id == trace_id
    assert (session.title, session.model, session.state) == (f"trace {trace_id}", model, "closed")
    assert stored_events(session) == expected_events()
    found = stored_detections(session)
    assert found == monitor_detections(model, expected_events())
    assert ("tool_outcomes", "repeated_failing_batch", "force_text", 17) in found  # the 4th failing call


def test_an_agent_trace_exported_span_by_span_in_protobuf_becomes_one_live_session(lab, token, user):  # noqa: F811
    server = lab()
    provider = TracerProvider()
    exporter = ProtobufExporter(endpoint=server.url + "/v1/traces", headers={"Authorization": f"Bearer {token}"})
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # one export per span, as each ends
    trace_id = run_agent(provider)

    assert_agent_session(user, trace_id)


def test_an_agent_trace_exported_at_once_in_gzipped_otlp_json_becomes_one_live_session(lab, token, user):  # noqa: F811
    server = lab()
    provider = TracerProvider()
    exporter = JsonExporter(
        endpoint=server.url + "/v1/traces",
        headers={"Authorization": f"Bearer {token}"},
        compression=Compression.GZIP,
    )
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))  # one export at shutdown
    trace_id = run_agent(provider)

    assert_agent_session(user, trace_id)


def looping_chat_spans() -> list:
    """Two chat spans of one trace, as the SDK ends them: a short normal
    answer, then the looping fixture's answer (its root still running)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("app")
    row = fixture_row(LOOP_FIXTURE)
    root = tracer.start_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}, start_time=T0)
    for number, text in enumerate(["Here are adjectives for the brand:", row["text"]]):
        output = [{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "length"}]
        span = tracer.start_span(
            "chat",
            context=set_span_in_context(root),
            attributes=chat_attributes(row["model"], [], output, "length"),
            start_time=T0 + number * SECOND,
        )
        span.end(end_time=T0 + (number + 1) * SECOND)
    return list(memory.get_finished_spans())


def test_the_sender_gets_the_loop_in_the_answer_and_a_viewer_over_the_socket(lab, token, user):  # noqa: F811
    server = lab()
    first, looping = looping_chat_spans()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
        answer = client.post("/v1/traces", content=encode_spans([first]).SerializeToString())
        assert (answer.status_code, answer.headers["content-type"]) == (200, "application/x-protobuf")
        assert not ExportTraceServiceResponse.FromString(answer.content).HasField("partial_success")  # nothing to say
        session = Session.objects.get(uploader=user)
        viewer_url = server.url.replace("http://", "ws://") + f"/ws/sessions/{session.pk}"
        with connect(viewer_url, additional_headers={"Authorization": f"Bearer {token}"}) as viewer:
            snapshot = json.loads(viewer.recv(timeout=30))
            while "events" not in snapshot:  # the snapshot's state, then its stored events
                snapshot = json.loads(viewer.recv(timeout=30))
            answer = client.post("/v1/traces", content=encode_spans([looping]).SerializeToString())
            seen = [json.loads(viewer.recv(timeout=30)) for _ in range(3)]

    row = fixture_row(LOOP_FIXTURE)
    events = [
        {"type": "turn", "t": 0.0},
        {"type": "content", "text": "Here are adjectives for the brand:", "t": 0.0},
        {"type": "finish", "reason": "length", "t": 0.0},
        {"type": "turn", "t": 1.0},
        {"type": "content", "text": row["text"], "t": 1.0},
        {"type": "finish", "reason": "length", "t": 1.0},
    ]
    assert snapshot["events"] == [{**event, "seq": seq} for seq, event in enumerate(events[:3], 1)]
    [stop] = Detection.objects.filter(session=session, action="stop")
    assert (stop.detector, stop.event_seq) == ("text_loop", 5)
    partial = ExportTraceServiceResponse.FromString(answer.content).partial_success
    assert partial.rejected_spans == 0
    assert partial.error_message == (
        f"trace {format(looping.context.trace_id, '032x')} (LoopGuard session {session.pk}):"
        f" loop detected: stop text_loop/{stop.type} at event 5"
    )
    assert seen[0] == {"events": [{**event, "seq": seq} for seq, event in enumerate(events[3:], 4)]}
    assert (seen[1]["detection"]["id"], seen[1]["detection"]["action"]) == (stop.pk, "stop")
    assert seen[2] == {"state": "stopped"}
    assert stored_events(session) == events
    assert Session.objects.get(pk=session.pk).state == "stopped"  # the root has not ended: the trace goes on


def test_an_otlp_json_sender_gets_the_detections_as_json(lab, token, user):  # noqa: F811
    server = lab()
    answer = httpx.post(
        server.url + "/v1/traces",
        content=encode_json_spans(looping_chat_spans()).to_json(),  # what JsonExporter sends
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        timeout=60,
    )

    session = Session.objects.get(uploader=user)
    [stop] = Detection.objects.filter(session=session, action="stop")
    data = answer.json()
    assert answer.status_code == 200
    [trace] = data["loopguard"]["traces"]
    assert (trace["session"], trace["spans"], trace["rejected"], trace["error"], trace["state"]) == (
        session.pk,
        2,
        0,
        None,
        "stopped",
    )
    assert [(d["id"], d["action"], d["event_seq"]) for d in trace["detections"] if d["action"] == "stop"] == [
        (stop.pk, "stop", 5)
    ]
    assert data["partialSuccess"]["rejectedSpans"] == 0
    assert "loop detected: " in data["partialSuccess"]["errorMessage"]
