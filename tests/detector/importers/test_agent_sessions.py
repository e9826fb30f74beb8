"""Claude Code, Codex CLI, Gemini CLI and Cline on record shapes the samples
lack: split assistant records, failing tools, upsert logs, ui_messages."""

from __future__ import annotations

import json

from detector.importers import parse_bytes


def lines(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def body(events):
    return [e for e in events if e["type"] != "session"]


def claude_assistant(message_id, block, stop=None, model="claude-z"):
    message = {"id": message_id, "role": "assistant", "model": model, "content": [block], "stop_reason": stop}
    return {"type": "assistant", "uuid": message_id + block["type"], "sessionId": "s", "message": message}


def test_claude_code_records_sharing_a_message_id_are_one_turn():
    tool_result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "boom"}],
        "is_error": True,
    }
    data = lines(
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "go"}},
        claude_assistant("m1", {"type": "thinking", "thinking": "plan"}),
        claude_assistant(
            "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "x"}}, stop="tool_use"
        ),
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [tool_result]}},
        claude_assistant("m2", {"type": "text", "text": "failed"}, stop="end_turn", model="<synthetic>"),
        {"type": "summary", "summary": "A summary", "leafUuid": "x"},
    )
    transcript = parse_bytes(data, "c.jsonl")
    assert (transcript.format, transcript.model, transcript.title) == ("claude-code", "claude-z", "A summary")
    assert body(transcript.events) == [
        {"type": "user", "text": "go"},
        {"type": "turn"},
        {"type": "reasoning", "text": "plan"},
        {"type": "tool_call", "name": "Bash", "args": {"command": "x"}, "id": "t1"},
        {"type": "finish", "reason": "tool_calls"},
        {"type": "tool_result", "id": "t1", "ok": False, "output": "boom"},
        {"type": "turn"},
        {"type": "content", "text": "failed"},
        {"type": "finish", "reason": "stop"},
    ]


def test_claude_code_a_tool_result_inside_a_response_does_not_split_its_turn():
    result = {"type": "tool_result", "tool_use_id": "a", "content": "ok"}
    data = lines(
        claude_assistant("m1", {"type": "tool_use", "id": "a", "name": "Read", "input": {}}),
        {"type": "user", "uuid": "u", "message": {"role": "user", "content": [result]}},
        claude_assistant("m1", {"type": "tool_use", "id": "b", "name": "Read", "input": {}}, stop="tool_use"),
        claude_assistant("m2", {"type": "text", "text": "x"}),
    )
    assert [e["type"] for e in body(parse_bytes(data, "c.jsonl").events)] == [
        "turn",
        "tool_call",
        "tool_result",
        "tool_call",
        "finish",
        "turn",
        "content",
    ]


def test_codex_shell_calls_exit_codes_and_errors():
    def item(payload):
        return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": payload}

    failed = json.dumps({"output": "no such file", "metadata": {"exit_code": 1}})
    data = lines(
        {"type": "session_meta", "payload": {"id": "abc", "model": "gpt-5-codex"}},
        item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
        item(
            {
                "type": "local_shell_call",
                "call_id": "l1",
                "status": "completed",
                "action": {"type": "exec", "command": ["ls"]},
            }
        ),
        item({"type": "function_call_output", "call_id": "l1", "output": failed}),
        item({"type": "function_call_output", "call_id": "l2", "output": {"content": "fine", "success": True}}),
        item(
            {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "raw"}],
                "encrypted_content": "E",
            }
        ),
        {"type": "event_msg", "payload": {"type": "error", "message": "stream disconnected"}},
        item({"type": "web_search_call", "action": {"type": "search", "query": "q"}}),
        item({"type": "brand_new_item"}),
    )
    transcript = parse_bytes(data, "rollout.jsonl")
    assert (transcript.format, transcript.model) == ("codex", "gpt-5-codex")
    assert transcript.events[0] == {"type": "session", "source": "codex", "id": "abc", "model": "gpt-5-codex"}
    assert body(transcript.events) == [
        {"type": "turn", "t": 0.0},
        {"type": "tool_call", "name": "local_shell", "args": {"type": "exec", "command": ["ls"]}, "id": "l1", "t": 0.0},
        {"type": "tool_result", "id": "l1", "ok": False, "output": failed, "t": 0.0},
        {"type": "tool_result", "id": "l2", "ok": True, "output": "fine", "t": 0.0},
        {"type": "turn", "t": 0.0},
        {"type": "reasoning", "text": "raw", "t": 0.0},
        {"type": "tool_call", "name": "web_search", "args": {"type": "search", "query": "q"}, "t": 0.0},
    ]
    assert transcript.warnings == ["line 7: error: stream disconnected"]
    assert transcript.skipped == [(2, "response_item/message/developer"), (9, "response_item/brand_new_item")]


def test_gemini_jsonl_upserts_rewinds_and_patches():
    call = {
        "id": "c1",
        "name": "run",
        "args": {"cmd": "x"},
        "status": "error",
        "result": [{"functionResponse": {"response": {"error": "denied"}}}],
    }
    data = lines(
        {"sessionId": "g", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"},
        {"id": "u1", "type": "user", "content": [{"text": "first"}]},
        {"id": "a1", "type": "gemini", "content": "draft", "model": "gemini-x"},
        {"id": "u2", "type": "user", "content": "dropped"},
        {"$rewindTo": "u2"},
        {"id": "a1", "type": "gemini", "content": "final", "model": "gemini-x", "toolCalls": [call]},
        {"$set": {"summary": "Title", "lastUpdated": "x"}},
        {"id": "i1", "type": "info", "content": "note"},
        {"id": "e1", "type": "error", "content": "quota"},
        {"$rewindTo": "nope"},
    )
    transcript = parse_bytes(data, "session.jsonl")
    assert (transcript.format, transcript.model, transcript.title) == ("gemini-cli", "gemini-x", "Title")
    assert body(transcript.events) == [
        {"type": "user", "text": "first"},
        {"type": "turn"},
        {"type": "content", "text": "final"},
        {"type": "tool_call", "name": "run", "args": {"cmd": "x"}, "id": "c1"},
        {"type": "tool_result", "id": "c1", "ok": False, "output": "denied"},
    ]
    assert transcript.skipped == [(8, "message info")]
    assert transcript.warnings == [
        "line 10: $rewindTo names an unknown message 'nope'; ignored",
        "line 9: error: quota",
    ]


def test_cline_ui_messages():
    records = [
        {"ts": 1700000000000, "type": "say", "say": "task", "text": "fix it"},
        {"ts": 1700000001000, "type": "say", "say": "api_req_started", "text": '{"request": "..."}'},
        {"ts": 1700000002000, "type": "say", "say": "reasoning", "text": "look first"},
        {"ts": 1700000003000, "type": "ask", "ask": "tool", "text": json.dumps({"tool": "readFile", "path": "a.py"})},
        {"ts": 1700000004000, "type": "ask", "ask": "command", "text": "pytest"},
        {"ts": 1700000005000, "type": "say", "say": "command_output", "text": "1 failed"},
        {"ts": 1700000006000, "type": "say", "say": "error", "text": "oops"},
        {"ts": 1700000007000, "type": "say", "say": "completion_result", "text": "done"},
        {"ts": 1700000008000, "type": "say", "say": "checkpoint_created"},
    ]
    transcript = parse_bytes(json.dumps(records).encode(), "ui_messages.json")
    assert transcript.format == "cline"
    assert body(transcript.events) == [
        {"type": "user", "text": "fix it", "t": 0.0},
        {"type": "turn", "t": 1.0},
        {"type": "reasoning", "text": "look first", "t": 2.0},
        {"type": "tool_call", "name": "readFile", "args": {"tool": "readFile", "path": "a.py"}, "t": 3.0},
        {"type": "tool_call", "name": "execute_command", "args": {"command": "pytest"}, "t": 4.0},
        {"type": "tool_result", "output": "1 failed", "t": 5.0},
        {"type": "content", "text": "done", "t": 7.0},
    ]
    assert transcript.warnings == ["[6] error: oops"]
    assert transcript.skipped == [(None, "[8] say checkpoint_created")]


def test_cline_history_with_roo_reasoning_and_failed_tool():
    history = [
        {"role": "user", "content": "<task>go</task>", "ts": 1},
        {
            "role": "assistant",
            "content": [{"type": "reasoning", "text": "r"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "bad", "is_error": True}]},
    ]
    transcript = parse_bytes(json.dumps(history).encode(), "api_conversation_history.json")
    assert transcript.format == "cline"
    assert [e["type"] for e in body(transcript.events)] == ["user", "turn", "reasoning", "tool_call", "tool_result"]
    assert transcript.events[-1] == {"type": "tool_result", "id": "t", "ok": False, "output": "bad"}
