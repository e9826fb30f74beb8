"""OpenAI Responses output as events (detector/importers/openai_responses.py):
a stream's reasoning, text and function calls in order, with its finish; a
whole response; the finish reasons of incomplete and failed responses."""

from __future__ import annotations

import pytest

from detector.importers.builder import TranscriptBuilder
from detector.importers.openai_responses import EventReader, add_response
from detector.importers.source import Source

CALL = {"type": "function_call", "call_id": "call_7", "name": "read_file", "arguments": '{"path": "a.py"}'}


def builder() -> TranscriptBuilder:
    return TranscriptBuilder(Source("response", ""), "openai-responses", "")


def test_a_stream_gives_reasoning_text_and_tool_calls_in_order():
    events = [
        {"type": "response.created", "response": {"model": "gpt-5", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning"}},
        {"type": "response.reasoning_summary_text.delta", "delta": "Need the "},
        {"type": "response.reasoning_summary_text.delta", "delta": "file."},
        {"type": "response.output_text.delta", "delta": "Reading it."},
        {"type": "response.function_call_arguments.delta", "delta": '{"path"'},
        {"type": "response.output_item.done", "output_index": 2, "item": CALL},
        {"type": "response.completed", "response": {"status": "completed", "output": [CALL]}},
    ]
    into = builder()
    reader = EventReader(into)
    for number, event in enumerate(events, 1):
        reader.feed(event, number)

    assert into.model == "gpt-5"
    assert into.events == [
        {"type": "turn"},
        {"type": "reasoning", "text": "Need the "},
        {"type": "reasoning", "text": "file."},
        {"type": "content", "text": "Reading it."},
        {"type": "tool_call", "name": "read_file", "args": {"path": "a.py"}, "id": "call_7"},
        {"type": "finish", "reason": "tool_calls"},
    ]
    assert into.skipped == [(2, "response.output_item.added"), (6, "response.function_call_arguments.delta")]


def test_a_whole_response_gives_its_items_and_finish():
    response = {
        "object": "response",
        "model": "gpt-5",
        "status": "completed",
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Think."}]},
            {
                "type": "message",
                "content": [{"type": "output_text", "text": "Done."}, {"type": "refusal", "refusal": "No."}],
            },
        ],
    }
    into = builder()
    add_response(into, response)
    assert into.events == [
        {"type": "turn"},
        {"type": "reasoning", "text": "Think."},
        {"type": "content", "text": "Done."},
        {"type": "content", "text": "No."},
        {"type": "finish", "reason": "stop"},
    ]


@pytest.mark.parametrize(
    ("status", "details", "reason"),
    [
        ("incomplete", {"reason": "max_output_tokens"}, "length"),
        ("incomplete", {"reason": "content_filter"}, "content_filter"),
        ("failed", None, "error"),
        ("in_progress", None, None),
    ],
)
def test_the_finish_follows_the_status(status, details, reason):
    into = builder()
    add_response(into, {"status": status, "incomplete_details": details, "output": []})
    assert into.events[1:] == ([{"type": "finish", "reason": reason}] if reason else [])
