"""Each real sample in fixtures/formats imports to exactly the expected
events. The expected values were counted from the raw files by hand (and a
throwaway script reading them with `json`, not with the importers)."""

from __future__ import annotations

from collections import Counter

import pytest

from detector.events import validate_event
from detector.importers import parse_path
from tests.shared_paths import FORMATS_DIR

SAMPLES = {
    "anthropic_stream/vercel__ai__anthropic-clear-thinking.1.chunks.txt": {
        "format": "anthropic/1",
        "model": "claude-sonnet-4-5-20250929",
        "counts": {"session": 1, "turn": 1, "reasoning": 9, "content": 3, "finish": 1},
        "chars": {"reasoning": 75, "content": 13, "user": 0},
        "tools": [],
        "ok": [],
        "finish": ["stop"],
        "skipped": [(3, "ping"), (22, "message_stop")],
    },
    "claude_code/jazzyalex__agent-sessions__small.jsonl": {
        "format": "claude-code/1",
        "model": None,
        "counts": {"session": 1, "user": 1, "turn": 2, "reasoning": 1, "content": 2, "tool_call": 1, "tool_result": 1},
        "chars": {"reasoning": 20, "content": 21, "user": 5},
        "tools": ["bash"],
        "ok": [None],
        "finish": [],
        "skipped": [
            (1, "system/session_start"),
            (2, "permission-mode"),
            (3, "attachment"),
            (4, "system/stop_hook_summary"),
            (9, "progress"),
            (10, "queue-operation"),
            (11, "file-history-snapshot"),
            (12, "agent-name"),
            (14, "last-prompt"),
        ],
    },
    "claude_code/jkindrix__claude-snatch__thinking_session.jsonl": {
        "format": "claude-code/1",
        "model": "claude-sonnet-4-20250514",
        "counts": {"session": 1, "user": 1, "turn": 1, "reasoning": 1, "content": 1, "finish": 1},
        "chars": {"reasoning": 106, "content": 174, "user": 49},
        "tools": [],
        "ok": [],
        "finish": ["stop"],
        "skipped": [],
    },
    "codex_cli/daaain__claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl": {
        "format": "codex/1",
        "model": "synthetic-model",
        "counts": {"session": 1, "user": 1, "turn": 4, "reasoning": 1, "content": 1, "tool_call": 3, "tool_result": 3},
        "chars": {"reasoning": 39, "content": 47, "user": 25},
        "tools": ["exec_command", "apply_patch", "mcp__synthetic__lookup"],
        "ok": [None, None, None],
        "finish": [],
        "skipped": [(3, "event_msg/user_message"), (12, "event_msg/agent_message"), (14, "future_synthetic_record")],
    },
    "gemini_cli/jazzyalex__agent-sessions__jsonl_v040.jsonl": {
        "format": "gemini-cli/1",
        "model": "gemini-3-flash-preview",
        "counts": {"session": 1, "user": 1, "turn": 2, "content": 1, "tool_call": 1, "tool_result": 1},
        "chars": {"reasoning": 0, "content": 26, "user": 25},
        "tools": ["run_shell_command"],
        "ok": [True],
        "finish": [],
        "skipped": [],
    },
    "gemini_cli/kvsankar__agent-history__gemini_golden.json": {
        "format": "gemini-cli/1",
        "model": "gemini-2.5-pro",
        "counts": {"session": 1, "user": 2, "turn": 2, "reasoning": 2, "content": 2, "tool_call": 1, "tool_result": 1},
        "chars": {"reasoning": 145, "content": 101, "user": 50},
        "tools": ["read_file"],
        "ok": [True],
        "finish": [],
        "skipped": [],
    },
    "cline/lerim-dev__lerim-cli__api_conversation_history.json": {
        "format": "cline/1",
        "model": None,
        "counts": {"session": 1, "user": 2, "turn": 5, "content": 3, "tool_call": 3, "tool_result": 3},
        "chars": {"reasoning": 0, "content": 219, "user": 72},
        "tools": ["write_to_file", "read_file", "write_to_file"],
        "ok": [None, None, None],
        "finish": [],
        "skipped": [],
    },
    "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt": {
        "format": "openai/1",
        "model": "deepseek-v4-flash",
        "counts": {"session": 1, "turn": 1, "reasoning": 17, "tool_call": 1, "finish": 1},
        "chars": {"reasoning": 80, "content": 0, "user": 0},
        "tools": ["weather"],
        "ok": [],
        "finish": ["tool_calls"],
        "skipped": [],
    },
    "otel/Arize-ai__openinference__ai-streamText-doStream.json": {
        "format": "otel/1",
        "model": "gpt-4o-mini-2024-07-18",
        "counts": {"session": 1, "user": 1, "turn": 1, "content": 1, "finish": 1},
        "chars": {"reasoning": 0, "content": 470, "user": 36},
        "tools": [],
        "ok": [],
        "finish": ["stop"],
        "skipped": [],
    },
}


def test_the_table_covers_every_sample():
    on_disk = {str(p.relative_to(FORMATS_DIR)) for p in FORMATS_DIR.glob("*/*")}
    assert on_disk == set(SAMPLES)


def assert_events_as_expected(events: list[dict], expected: dict) -> None:
    """`events` match a row of SAMPLES: counts by type, text lengths per
    channel, tool names, tool outcomes, finish reasons, and all are valid.
    (The stored-session tests reuse it.)"""
    assert Counter(e["type"] for e in events) == expected["counts"]
    for channel, chars in expected["chars"].items():
        assert sum(len(e["text"]) for e in events if e["type"] == channel) == chars, channel
    assert [e["name"] for e in events if e["type"] == "tool_call"] == expected["tools"]
    assert [e.get("ok") for e in events if e["type"] == "tool_result"] == expected["ok"]
    assert [e["reason"] for e in events if e["type"] == "finish"] == expected["finish"]
    for event in events:
        validate_event(event)


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("fmt", ["auto", "named"])
def test_sample_imports_to_the_expected_events(name, fmt):
    expected = SAMPLES[name]
    format_name = expected["format"].split("/")[0]
    transcript = parse_path(FORMATS_DIR / name, format_name if fmt == "named" else "auto")
    events = transcript.events
    assert f"{transcript.format}/1" == transcript.parser_version == expected["format"]
    assert transcript.model == expected["model"]
    assert events[0]["type"] == "session" and events[0]["source"] == format_name
    assert events[0].get("model") == expected["model"]
    assert_events_as_expected(events, expected)
    assert transcript.skipped == expected["skipped"]
    assert transcript.warnings == []


def test_openai_sample_assembles_the_streamed_tool_call():
    events = parse_path(FORMATS_DIR / "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt").events
    assert events[-2:] == [
        {
            "type": "tool_call",
            "name": "weather",
            "args": {"location": "San Francisco"},
            "id": "call_00_IhCAliIHtM9gKpgfqbBV9873",
        },
        {"type": "finish", "reason": "tool_calls"},
    ]
    reasoning = "".join(e["text"] for e in events if e["type"] == "reasoning")
    assert reasoning == "The user asks about the weather in San Francisco. I should use the weather tool."


def test_claude_code_sample_keeps_sidechain_title_and_times():
    transcript = parse_path(FORMATS_DIR / "claude_code/jazzyalex__agent-sessions__small.jsonl")
    assert transcript.title == "Stage0 small fixture"
    assert transcript.events[0] == {
        "type": "session",
        "source": "claude-code",
        "id": "ses_stage0_small",
        "meta": {"title": "Stage0 small fixture"},
    }
    assert transcript.events[1:] == [
        {"type": "user", "text": "Hello", "t": 0.0, "isSidechain": True},
        {"type": "turn", "t": 1.0, "isSidechain": True},
        {"type": "reasoning", "text": "Reasoning goes here.", "t": 1.0, "isSidechain": True},
        {"type": "content", "text": "I'll list files.", "t": 1.0, "isSidechain": True},
        {"type": "tool_call", "name": "bash", "args": {"command": "ls"}, "t": 1.0, "isSidechain": True},
        {"type": "tool_result", "output": "ok", "t": 2.0, "isSidechain": True},
        {"type": "turn", "t": 3.0, "isSidechain": True},
        {"type": "content", "text": "Done.", "t": 3.0, "isSidechain": True},
    ]


def test_codex_sample_never_shows_encrypted_reasoning():
    transcript = parse_path(
        FORMATS_DIR
        / "codex_cli/daaain__claude-code-log__rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
    )
    assert "SYNTHETIC_ENCRYPTED" not in repr(transcript)
    calls = [e for e in transcript.events if e["type"] in ("tool_call", "tool_result")]
    assert [(e["type"], e.get("id"), e.get("args"), e.get("output")) for e in calls] == [
        ("tool_call", "call-structured-001", {"cmd": "find . -maxdepth 1 -type f"}, None),
        ("tool_result", "call-structured-001", None, "./alpha.txt\n./beta.txt"),
        (
            "tool_call",
            "call-custom-001",
            {"input": "*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch"},
            None,
        ),
        ("tool_result", "call-custom-001", None, "Done!"),
        ("tool_call", "call-mcp-001", {"query": "fixture"}, None),
        ("tool_result", "call-mcp-001", None, '{"status":"ok"}'),
    ]


def test_gemini_sample_thoughts_read_subject_then_description():
    events = parse_path(FORMATS_DIR / "gemini_cli/kvsankar__agent-history__gemini_golden.json").events
    assert [e["text"] for e in events if e["type"] == "reasoning"] == [
        "File Reading Request: User wants to see the contents of package.json",
        "Answering Question: Extracting project name from previously read package.json",
    ]
