"""The `anthropic` importer on what the sample lacks: streamed tool_use,
redacted thinking, errors, other stop reasons and whole responses."""

from __future__ import annotations

import json

import pytest

from detector.importers import parse_bytes


def lines(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def body(events):
    return [e for e in events if e["type"] != "session"]


def delta(index, **fields):
    return {"type": "content_block_delta", "index": index, "delta": fields}


def test_tool_use_input_is_assembled_from_json_deltas():
    data = lines(
        {"type": "message_start", "message": {"model": "claude-x", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "xx"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "tu", "name": "bash", "input": {}},
        },
        delta(1, type="input_json_delta", partial_json='{"comm'),
        delta(1, type="input_json_delta", partial_json='and": "ls"}'),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "tv", "name": "noop", "input": {}},
        },
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )
    transcript = parse_bytes(data, "a.jsonl")
    assert transcript.format == "anthropic" and transcript.model == "claude-x"
    assert body(transcript.events) == [
        {"type": "turn"},
        {"type": "tool_call", "name": "bash", "args": {"command": "ls"}, "id": "tu"},
        {"type": "tool_call", "name": "noop", "args": {}, "id": "tv"},
        {"type": "finish", "reason": "tool_calls"},
    ]
    assert transcript.skipped == [(2, "content block redacted_thinking"), (11, "message_stop")]


def test_a_stream_cut_inside_a_tool_block_still_gives_the_call():
    data = lines(
        {"type": "message_start", "message": {"model": "m"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        },
        delta(0, type="input_json_delta", partial_json='{"a": '),
    )
    assert body(parse_bytes(data, "a.jsonl").events)[-1] == {
        "type": "tool_call",
        "name": "f",
        "args": {"_raw": '{"a": '},
        "id": "t",
    }


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("stop_sequence", "stop_sequence"),
        ("refusal", "refusal"),
    ],
)
def test_stop_reasons_map_to_finish_reasons(stop, reason):
    data = lines({"type": "message_start", "message": {}}, {"type": "message_delta", "delta": {"stop_reason": stop}})
    assert parse_bytes(data, "a.jsonl").events[-1] == {"type": "finish", "reason": reason}


def test_error_events_become_warnings():
    data = lines(
        {"type": "message_start", "message": {}},
        delta(0, type="text_delta", text="hi"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    transcript = parse_bytes(data, "a.jsonl")
    assert transcript.warnings == ["line 3: overloaded_error: Overloaded"]
    assert body(transcript.events) == [{"type": "turn"}, {"type": "content", "text": "hi"}]


def test_a_whole_messages_response():
    response = {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "claude-y",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t", "name": "f", "input": {"x": 1}},
        ],
        "stop_reason": "tool_use",
    }
    transcript = parse_bytes(json.dumps(response, indent=1).encode(), "r.json")
    assert transcript.format == "anthropic" and transcript.model == "claude-y"
    assert body(transcript.events) == [
        {"type": "turn"},
        {"type": "reasoning", "text": "hmm"},
        {"type": "content", "text": "ok"},
        {"type": "tool_call", "name": "f", "args": {"x": 1}, "id": "t"},
        {"type": "finish", "reason": "tool_calls"},
    ]
