"""The `otel` importer: OTLP JSON, GenAI semantic conventions (current and
flattened), OpenInference attributes, tool spans, span order."""

from __future__ import annotations

import json

from detector.importers import parse_bytes


def value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v}


def otlp_span(name, start, attrs, status=None):
    span = {"traceId": "t", "spanId": name, "name": name, "startTimeUnixNano": str(start * 10**9)}
    span["attributes"] = [{"key": k, "value": value(v)} for k, v in attrs.items()]
    if status is not None:
        span["status"] = {"code": status}
    return span


def otlp(*spans):
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]})


def body(events):
    return [e for e in events if e["type"] != "session"]


CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.input.messages": json.dumps(
        [
            {"role": "system", "parts": [{"type": "text", "content": "s"}]},
            {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        ]
    ),
    "gen_ai.output.messages": json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "content": "think"},
                    {"type": "text", "content": "ok"},
                    {"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"p": "."}},
                ],
                "finish_reason": "tool_call",
            }
        ]
    ),
    "gen_ai.response.finish_reasons": ["tool_calls"],
}


def test_otlp_genai_spans_in_start_order():
    tool = otlp_span(
        "execute_tool ls",
        1700000002,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "ls",
            "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.result": "denied",
        },
        status=2,
    )
    agent = otlp_span(
        "invoke_agent", 1700000000, {"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "gpt-4o"}
    )
    transcript = parse_bytes(otlp(tool, otlp_span("chat", 1700000001, CHAT), agent).encode(), "trace.json")
    assert (transcript.format, transcript.model) == ("otel", "gpt-4o")
    assert body(transcript.events) == [
        {"type": "user", "text": "hi", "t": 0.0},
        {"type": "turn", "t": 0.0},
        {"type": "reasoning", "text": "think", "t": 0.0},
        {"type": "content", "text": "ok", "t": 0.0},
        {"type": "tool_call", "name": "ls", "args": {"p": "."}, "id": "c1", "t": 0.0},
        {"type": "finish", "reason": "tool_calls", "t": 0.0},
        {"type": "tool_result", "id": "c1", "ok": False, "output": "denied", "t": 1.0},
    ]
    assert transcript.skipped == [(None, "span invoke_agent")]


def test_collector_file_export_is_json_lines_of_batches():
    one = otlp(otlp_span("chat", 1700000001, CHAT))
    transcript = parse_bytes(f"{one}\n{one}\n".encode(), "export.jsonl")
    assert transcript.format == "otel"
    assert [e["type"] for e in transcript.events].count("turn") == 2


def test_flattened_openllmetry_and_openinference_attributes():
    old = {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "m1",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "q",
        "gen_ai.completion.0.content": "a",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.completion.0.tool_calls.0.name": "f",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"x": 1}',
    }
    openinference = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "m2",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "q2",
        "llm.output_messages.0.message.content": "a2",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "g",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
    }
    tool = {"openinference.span.kind": "TOOL", "tool.name": "g", "input.value": "{}", "output.value": "res"}
    spans = [
        {"name": "a", "context": {"trace_id": "t"}, "start_time": "2026-01-01T00:00:00Z", "attributes": old},
        {"name": "b", "context": {"trace_id": "t"}, "start_time": "2026-01-01T00:00:01Z", "attributes": openinference},
        {"name": "c", "context": {"trace_id": "t"}, "start_time": "2026-01-01T00:00:02Z", "attributes": tool},
    ]
    spans.append({**spans[2], "name": "d"})  # a tool span no LLM span asked for
    transcript = parse_bytes(json.dumps(spans).encode(), "spans.json")
    assert transcript.model == "m1"
    assert [
        (e["type"], e.get("text") or e.get("name") or e.get("reason") or e.get("output"))
        for e in body(transcript.events)
    ] == [
        ("user", "q"),
        ("turn", None),
        ("content", "a"),
        ("tool_call", "f"),
        ("finish", "stop"),
        ("user", "q2"),
        ("turn", None),
        ("content", "a2"),
        ("tool_call", "g"),
        ("tool_result", "res"),
        ("tool_call", "g"),
        ("tool_result", "res"),
    ]
