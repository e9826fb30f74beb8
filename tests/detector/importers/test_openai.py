"""The `openai` importer on the shapes the samples lack: other reasoning
fields, tool-call fragments, whole completions and messages arrays."""

from __future__ import annotations

import json

from detector.importers import parse_bytes


def chunk(delta=None, finish=None, index=0, chunk_id="r1", **extra):
    choice = {"index": index, "delta": delta or {}, "finish_reason": finish}
    return {"id": chunk_id, "object": "chat.completion.chunk", "model": "m", "choices": [choice], **extra}


def lines(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def body(events):
    return [e for e in events if e["type"] != "session"]


def test_reasoning_comes_from_reasoning_content_reasoning_or_details():
    data = lines(
        chunk({"reasoning_content": "a"}),
        chunk({"reasoning": "b", "reasoning_details": [{"type": "reasoning.text", "text": "b"}]}),
        chunk(
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "c"},
                    {"type": "reasoning.encrypted", "data": "x"},
                ]
            }
        ),
        chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": "d"}]}),
        chunk({"content": "e"}, finish="stop"),
    )
    assert body(parse_bytes(data, "s.jsonl").events) == [
        {"type": "turn"},
        {"type": "reasoning", "text": "a"},
        {"type": "reasoning", "text": "b"},
        {"type": "reasoning", "text": "c"},
        {"type": "reasoning", "text": "d"},
        {"type": "content", "text": "e"},
        {"type": "finish", "reason": "stop"},
    ]


def test_parallel_tool_calls_are_emitted_when_the_next_index_starts():
    def frag(index, **function):
        return chunk(
            {
                "tool_calls": [
                    {"index": index, "function": function, **({"id": f"c{index}"} if "name" in function else {})}
                ]
            }
        )

    data = lines(
        frag(0, name="read", arguments='{"pa'),
        frag(0, arguments='th": "a"}'),
        frag(1, name="write", arguments="{not json"),
        chunk({"content": "done"}),
        frag(2, name="ls", arguments=""),
        chunk(finish="tool_calls"),
    )
    assert body(parse_bytes(data, "s.jsonl").events) == [
        {"type": "turn"},
        {"type": "tool_call", "name": "read", "args": {"path": "a"}, "id": "c0"},
        {"type": "tool_call", "name": "write", "args": {"_raw": "{not json"}, "id": "c1"},
        {"type": "content", "text": "done"},
        {"type": "tool_call", "name": "ls", "args": {}, "id": "c2"},
        {"type": "finish", "reason": "tool_calls"},
    ]


def test_a_new_id_on_the_same_index_is_a_new_call():
    data = lines(
        chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": "{}"}}]}),
    )
    assert [(e["name"], e["id"]) for e in parse_bytes(data, "s.jsonl").events if e["type"] == "tool_call"] == [
        ("f", "a"),
        ("g", "b"),
    ]


def test_only_choice_0_is_imported_and_the_warning_says_so():
    data = lines(chunk({"content": "zero"}), chunk({"content": "one"}, index=1), chunk(finish="stop"))
    transcript = parse_bytes(data, "s.jsonl")
    assert [e["text"] for e in transcript.events if e["type"] == "content"] == ["zero"]
    assert transcript.warnings == ["only choice 0 is imported; the input also has choices ['1']"]


def test_a_new_response_id_or_a_chunk_after_a_finish_starts_a_turn_and_errors_become_warnings():
    data = lines(
        chunk({"content": "a"}, finish="length"),
        {"error": {"message": "overloaded"}},
        chunk({"content": "b"}, chunk_id="r2"),
        chunk({"content": "c"}, chunk_id="r2", finish="stop"),
        chunk({"content": "d"}, chunk_id="r2"),
    )
    transcript = parse_bytes(data, "s.jsonl")
    assert body(transcript.events) == [
        {"type": "turn"},
        {"type": "content", "text": "a"},
        {"type": "finish", "reason": "length"},
        {"type": "turn"},
        {"type": "content", "text": "b"},
        {"type": "content", "text": "c"},
        {"type": "finish", "reason": "stop"},
        {"type": "turn"},
        {"type": "content", "text": "d"},
    ]
    assert transcript.warnings == ["line 2: error: overloaded"]


def test_chunks_without_choices_start_no_turn():
    filter_results = {"id": "", "object": "", "choices": [], "prompt_filter_results": [{"prompt_index": 0}]}
    usage = {"id": "r1", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 3}}
    data = lines(filter_results, chunk({"content": "a"}), chunk(finish="stop"), usage)
    assert body(parse_bytes(data, "s.jsonl").events) == [
        {"type": "turn"},
        {"type": "content", "text": "a"},
        {"type": "finish", "reason": "stop"},
    ]


def test_a_whole_chat_completion():
    completion = {
        "id": "x",
        "object": "chat.completion",
        "model": "gpt-x",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "hi",
                    "reasoning_content": "think",
                    "tool_calls": [{"id": "t", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    transcript = parse_bytes(json.dumps(completion, indent=2).encode(), "c.json")
    assert transcript.format == "openai" and transcript.model == "gpt-x"
    assert body(transcript.events) == [
        {"type": "turn"},
        {"type": "reasoning", "text": "think"},
        {"type": "content", "text": "hi"},
        {"type": "tool_call", "name": "f", "args": {"a": 1}, "id": "t"},
        {"type": "finish", "reason": "tool_calls"},
    ]


def test_a_plain_messages_array():
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "list"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "a b"},
        {"role": "assistant", "content": "a and b", "reasoning": "easy"},
    ]
    transcript = parse_bytes(json.dumps(messages).encode(), "m.json")
    assert transcript.format == "openai"
    assert body(transcript.events) == [
        {"type": "user", "text": "list"},
        {"type": "turn"},
        {"type": "tool_call", "name": "ls", "args": {}, "id": "c"},
        {"type": "tool_result", "id": "c", "output": "a b"},
        {"type": "turn"},
        {"type": "reasoning", "text": "easy"},
        {"type": "content", "text": "a and b"},
    ]
    assert transcript.skipped == [(None, "[0] role system")]


def test_a_request_body_gives_its_model():
    data = json.dumps({"model": "gpt-y", "messages": [{"role": "user", "content": "hi"}]}).encode()
    transcript = parse_bytes(data, "r.json", "openai")
    assert transcript.model == "gpt-y"
    assert body(transcript.events) == [{"type": "user", "text": "hi"}]


def test_tool_arguments_read_like_every_other_json():
    data = lines(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x": NaN}'}}]}))
    assert parse_bytes(data, "s.jsonl").events[-1] == {"type": "tool_call", "name": "f", "args": {"x": None}, "id": "a"}


def test_a_lone_choice_is_read_by_its_fields_not_by_the_common_shape():
    # the common chunk (choice 0 alone, text in reasoning_content or content) takes a
    # shorter path; every other shape of a lone choice must read as it always did
    data = lines(
        chunk({"reasoning_content": "", "reasoning": "r"}),
        chunk({"content": None, "refusal": "no"}),
        chunk({"content": [{"type": "text", "text": "p"}, {"type": "text", "text": "q"}]}),
        chunk({"content": ""}),
        chunk({"content": "skipped"}, index=None),
        chunk({"content": "also zero"}, index=0.0),
        chunk(finish="stop"),
    )
    transcript = parse_bytes(data, "s.jsonl")
    assert body(transcript.events) == [
        {"type": "turn"},
        {"type": "reasoning", "text": "r"},
        {"type": "content", "text": "no"},
        {"type": "content", "text": "pq"},
        {"type": "content", "text": "also zero"},
        {"type": "finish", "reason": "stop"},
    ]
    assert transcript.warnings == ["only choice 0 is imported; the input also has choices ['None']"]
