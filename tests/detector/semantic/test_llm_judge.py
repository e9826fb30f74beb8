"""The LLM judge against a local OpenAI-compatible stub: when it asks, what
it sends, how it reads the answers, and that a failing endpoint never
breaks the monitor."""

from __future__ import annotations

import json
import pickle
import re
import socket

import pytest

from detector import ConfigError, Monitor, get_profile, loads_config
from detector.base import StreamContext
from detector.chat_client import HttpChatClient, judge_client_for
from detector.config import BUILTIN_PROFILES
from detector.llm_judge import SYSTEM_PROMPT, TASK_PROMPT, JudgeError, LLMJudge, LLMJudgeParams, parse_verdict

REQUEST = "Fix the failing test in tests/test_parser.py"


def judge_monitor(base_url: str, **params) -> Monitor:
    values = {"base_url": base_url, "model": "judge-a", **params}
    body = "\n".join(f"{key} = {json.dumps(value)}" for key, value in values.items())
    config = loads_config(f"[profiles.judged.llm_judge]\n{body}\n")
    return Monitor("judged", config=config, judge_client=judge_client_for(config.select("judged")))


def agent_turn(n: int) -> list[dict]:
    """One turn of an agent retrying the same failing test."""
    return [
        {"type": "turn"},
        {"type": "content", "text": f"Attempt {n}: "},
        {"type": "content", "text": "running the tests."},
        {"type": "tool_call", "name": "run_tests", "args": {"path": "tests/test_parser.py"}, "id": f"c{n}"},
        {"type": "finish", "reason": "tool_calls"},
        {"type": "tool_result", "id": f"c{n}", "ok": False, "output": "1 failed: test_parse_dates"},
    ]


def run_session(monitor: Monitor, stub, turns: int) -> tuple[list[int], list]:
    """Feed a user request and `turns` agent turns; the turns at which the
    judge was asked, and the detections."""
    asked_at, detections = [], []
    detections += monitor.feed({"type": "user", "text": REQUEST})
    for n in range(1, turns + 1):
        for event in agent_turn(n):
            before = len(stub.requests)
            detections += monitor.feed(event)
            if len(stub.requests) > before:
                asked_at.append(monitor.ctx.turn)
    return asked_at, detections


def test_it_is_off_in_every_builtin_profile():
    for name in BUILTIN_PROFILES:
        assert "llm_judge" not in get_profile(name).detectors


def test_it_asks_at_turn_30_then_on_the_interval_the_confidence_gives(chat_stub):
    # 0.1 -> round(5 + 10 * 0.9) = 14; 0.5 -> 10; 0.89 -> round(6.1) = 6; 0.9 is a loop, then 6.
    chat_stub.script(
        "judge-a",
        {"analysis": "steady progress", "confidence": 0.1},
        {"analysis": "some repetition", "confidence": 0.5},
        {"analysis": "nearly stuck", "confidence": 0.89},
        {"analysis": "The same test run fails the same way every turn.", "confidence": 0.9},
    )
    monitor = judge_monitor(chat_stub.base_url)
    asked_at, detections = run_session(monitor, chat_stub, 65)
    assert asked_at == [30, 44, 54, 60]
    assert [d.to_dict() for d in detections] == [
        {
            "detector": "llm_judge",
            "type": "llm_detected_loop",
            "channel": "session",
            "start": 50,
            "end": 60,
            "at": 60,
            "unit": "",
            "period": 0,
            "repeats": 0,
            "action": "stop",
            "message": "Loop detected: The AI analysis shows no meaningful progress. Clarify the goal or break "
            "into smaller steps. Judge (judge-a, confidence 0.90): The same test run fails the same way every turn.",
            "turn": 60,
            "extra": {
                "analysis": "The same test run fails the same way every turn.",
                "confidence": 0.9,
                "model": "judge-a",
                "turns_in_request": 60,
            },
        }
    ]
    checks = [(c.checkpoint, c.start, c.end, c.check, c.result) for c in monitor.take_checkpoints()]
    assert checks == [
        (30, 20, 30, "judge-a: confidence 0.1", ""),
        (44, 34, 44, "judge-a: confidence 0.5", ""),
        (54, 44, 54, "judge-a: confidence 0.89", ""),
        (60, 50, 60, "judge-a: confidence 0.9", "llm_detected_loop"),
    ]


def test_it_sends_the_original_request_and_the_last_20_messages(chat_stub):
    chat_stub.script("judge-a", {"analysis": "fine", "confidence": 0.0})
    run_session(judge_monitor(chat_stub.base_url), chat_stub, 30)
    [request] = chat_stub.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Content-Type"] == "application/json"
    assert "Authorization" not in request["headers"]
    body = request["body"]
    assert body["model"] == "judge-a"
    assert body["temperature"] == 0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "loop_check",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "analysis": {
                        "type": "string",
                        "description": "why the conversation is or is not looping without progress",
                    },
                    "confidence": {
                        "type": "number",
                        "description": "0.0 to 1.0: how sure the judge is that it is stuck",
                    },
                },
                "required": ["analysis", "confidence"],
                "additionalProperties": False,
            },
        },
    }
    # Turns 20 to 29, each one assistant message and one tool-result message;
    # the user message (before turn 1) has fallen out of the window.
    history = []
    for n in range(20, 30):
        history.append(
            {
                "role": "assistant",
                "content": f'Attempt {n}: running the tests.\n[tool call] run_tests {{"path": "tests/test_parser.py"}}',
            }
        )
        history.append({"role": "user", "content": "[tool result failed] 1 failed: test_parse_dates"})
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"<original_user_request>\n{REQUEST}\n</original_user_request>"},
        *history,
        {"role": "user", "content": TASK_PROMPT},
    ]


def test_a_user_message_starts_the_count_afresh(chat_stub):
    monitor = judge_monitor(chat_stub.base_url)
    run_session(monitor, chat_stub, 29)
    asked_at, _ = run_session(monitor, chat_stub, 29)
    assert asked_at == []
    assert chat_stub.requests == []


@pytest.mark.parametrize(
    ("first", "second", "loop"),
    [(0.95, 0.92, True), (0.95, 0.89, False), (0.9, 0.9, True)],
)
def test_a_confirm_model_must_agree(chat_stub, first, second, loop):
    chat_stub.script("judge-a", {"analysis": "A thinks so", "confidence": first})
    chat_stub.script("judge-b", {"analysis": "B's view", "confidence": second})
    monitor = judge_monitor(chat_stub.base_url, confirm_model="judge-b")
    asked_at, detections = run_session(monitor, chat_stub, 30)
    assert asked_at == [30]
    assert chat_stub.models_asked() == ["judge-a", "judge-b"]
    assert chat_stub.requests[0]["body"]["messages"] == chat_stub.requests[1]["body"]["messages"]
    if loop:
        [detection] = detections
        assert detection.extra == {
            "analysis": "B's view",
            "confidence": second,
            "model": "judge-b",
            "turns_in_request": 30,
        }
        assert detection.message.endswith(f"Judge (judge-b, confidence {second:.2f}): B's view")
    else:
        assert detections == []


def test_the_confirm_model_is_not_asked_below_the_threshold_and_its_doubt_sets_the_interval(chat_stub):
    chat_stub.script("judge-a", *({"analysis": "", "confidence": c} for c in (0.89, 0.95, 0.0)))
    chat_stub.script("judge-b", {"analysis": "", "confidence": 0.3})
    monitor = judge_monitor(chat_stub.base_url, confirm_model="judge-b")
    # 0.89 -> next check in 6 turns (36); there A is sure, B is not: 0.3 -> 12 turns (48).
    asked_at, detections = run_session(monitor, chat_stub, 48)
    assert asked_at == [30, 36, 48]
    assert chat_stub.models_asked() == ["judge-a", "judge-a", "judge-b", "judge-a"]
    assert detections == []


def test_a_loop_is_reported_again_on_the_next_confident_check(chat_stub):
    chat_stub.script(
        "judge-a", {"analysis": "stuck", "confidence": 1.0}, {"analysis": "still stuck", "confidence": 0.97}
    )
    asked_at, detections = run_session(judge_monitor(chat_stub.base_url), chat_stub, 35)
    # Confidence 1.0 -> the minimum interval, 5.
    assert asked_at == [30, 35]
    assert [(d.at, d.extra["analysis"]) for d in detections] == [(30, "stuck"), (35, "still stuck")]


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (("status", 500), "HTTP 500"),
        (("content", "I think it loops."), "the judge's answer is not JSON: 'I think it loops.'"),
        (("content", '{"analysis": "x", "confidence": "high"}'), "not a number from 0 to 1: 'high'"),
        (("content", '{"analysis": "x", "confidence": 1.5}'), "not a number from 0 to 1: 1.5"),
    ],
)
def test_an_endpoint_failure_is_no_loop_and_keeps_the_interval(chat_stub, entry, error):
    chat_stub.script("judge-a", entry, {"analysis": "", "confidence": 0.95})
    monitor = judge_monitor(chat_stub.base_url)
    asked_at, detections = run_session(monitor, chat_stub, 40)
    # The failure leaves the default interval (10): the next check is at 40.
    assert asked_at == [30, 40]
    assert [d.at for d in detections] == [40]
    first = monitor.take_checkpoints()[0]
    assert (first.checkpoint, first.result) == (30, "")
    assert first.check.startswith("judge-a: error: ")
    assert error in first.check


def test_a_failing_confirm_model_is_no_loop(chat_stub):
    chat_stub.script("judge-a", {"analysis": "", "confidence": 0.99})
    chat_stub.script("judge-b", ("status", 503))
    monitor = judge_monitor(chat_stub.base_url, confirm_model="judge-b")
    asked_at, detections = run_session(monitor, chat_stub, 30)
    assert (asked_at, detections) == ([30], [])
    assert [c.result for c in monitor.take_checkpoints()] == ["llm_detected_loop", ""]


def test_a_timeout_is_no_loop(chat_stub):
    chat_stub.script("judge-a", ("hang",))
    monitor = judge_monitor(chat_stub.base_url, timeout=0.2)
    asked_at, detections = run_session(monitor, chat_stub, 30)
    assert (asked_at, detections) == ([30], [])
    [checkpoint] = monitor.take_checkpoints()
    assert checkpoint.check.endswith("/v1/chat/completions: no answer within 0.2 s")


def test_an_unreachable_endpoint_is_no_loop():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monitor = judge_monitor(f"http://127.0.0.1:{port}/v1", timeout=5.0)
    monitor.feed({"type": "user", "text": REQUEST})
    for n in range(1, 31):
        for event in agent_turn(n):
            assert monitor.feed(event) == []
    [checkpoint] = monitor.take_checkpoints()
    assert "cannot connect" in checkpoint.check


def test_the_api_key_comes_from_the_named_variable(chat_stub, monkeypatch):
    monkeypatch.setenv("LOOPGUARD_TEST_JUDGE_KEY", "sk-test-123")
    chat_stub.script("judge-a", {"analysis": "", "confidence": 0.0})
    run_session(judge_monitor(chat_stub.base_url, api_key_env="LOOPGUARD_TEST_JUDGE_KEY"), chat_stub, 30)
    assert chat_stub.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"model": ""}, "llm_judge.model: required"),
        ({"base_url": ""}, "llm_judge.base_url: required"),
        (
            {"api_key_env": "LOOPGUARD_TEST_NO_SUCH_KEY"},
            "the environment variable LOOPGUARD_TEST_NO_SUCH_KEY is not set",
        ),
        ({"min_interval": 9, "max_interval": 8}, "llm_judge.min_interval: 9 is above max_interval 8"),
    ],
)
def test_a_bad_configuration_fails_when_the_monitor_is_built(monkeypatch, params, error):
    monkeypatch.delenv("LOOPGUARD_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match=error):
        judge_monitor(**{"base_url": "http://127.0.0.1:9/v1", **params})


def test_dangling_tool_calls_and_orphan_results_are_left_out():
    sent = []

    def client(payload: dict) -> dict:
        sent.append(payload["messages"][1:-1])
        return {"choices": [{"message": {"content": '{"analysis": "", "confidence": 0}'}}]}

    params = LLMJudgeParams(
        model="m", after_turns=3, min_interval=1, max_interval=1, default_interval=1, history_messages=3
    )
    judge = LLMJudge(params, client=client)
    ctx = StreamContext()
    events = [
        {"type": "turn"},
        {"type": "content", "text": "t1"},
        {"type": "tool_call", "name": "a", "args": {}},
        {"type": "tool_result", "output": "r1"},
        {"type": "turn"},
        {"type": "content", "text": "t2"},
        {"type": "tool_call", "name": "b", "args": {"k": 1}},
        {"type": "tool_result", "ok": True, "output": "r2"},
        {"type": "turn"},  # check 1: the window [r1, t2, r2] loses its leading result
        {"type": "tool_call", "name": "c", "args": {}},
        {"type": "turn"},  # check 2: [t2, r2, c] loses its trailing call without a result
    ]
    for event in events:
        ctx.turn += event["type"] == "turn"
        judge.feed(event, ctx)
    expected = [
        {"role": "user", "content": "Recent conversation history:"},
        {"role": "assistant", "content": 't2\n[tool call] b {"k": 1}'},
        {"role": "user", "content": "[tool result ok] r2"},
    ]
    assert sent == [expected, expected]


def test_long_messages_are_cut():
    sent = []

    def client(payload: dict) -> dict:
        sent.append(payload["messages"])
        return {"choices": [{"message": {"content": '```json\n{"analysis": "", "confidence": 0.2}\n```'}}]}

    params = LLMJudgeParams(model="m", after_turns=1, default_interval=1, max_message_chars=100)
    judge = LLMJudge(params, client=client)
    ctx = StreamContext()
    judge.feed({"type": "user", "text": "u" * 150}, ctx)
    judge.feed({"type": "turn"}, ctx)
    assert sent[0][1]["content"] == "<original_user_request>\n" + "u" * 100 + "\n</original_user_request>"
    assert sent[0][2]["content"] == "u" * 100 + "\n[... 50 more characters]"
    assert judge.interval == 13  # round(5 + 10 * 0.8): the fenced answer was read


@pytest.mark.parametrize(
    ("response", "error"),
    [
        ({}, "no choices[0].message.content"),
        ({"choices": []}, "no choices[0].message.content"),
        ({"choices": [{"message": {"content": None}}]}, "is not text"),
        ({"choices": [{"message": {"content": "[0.9]"}}]}, "confidence is not a number from 0 to 1: None"),
        ({"choices": [{"message": {"content": '{"confidence": true}'}}]}, "not a number from 0 to 1: True"),
    ],
)
def test_parse_verdict_refuses_what_is_not_the_answer_asked_for(response, error):
    with pytest.raises(JudgeError, match=re.escape(error)):
        parse_verdict(response)


def test_parse_verdict_takes_a_missing_analysis_as_empty():
    assert parse_verdict({"choices": [{"message": {"content": '{"confidence": 1}'}}]}) == ("", 1.0)


def test_the_judge_is_given_its_client_and_builds_none():
    with pytest.raises(ConfigError, match=r"llm_judge: needs a chat client: Monitor\(\.\.\., judge_client="):
        LLMJudge(LLMJudgeParams(model="m", base_url="http://127.0.0.1:9/v1"))
    config = loads_config('[profiles.judged.llm_judge]\nmodel = "m"\n')
    with pytest.raises(ConfigError, match="llm_judge: needs a chat client"):
        Monitor("judged", config=config)


def test_the_http_client_reads_the_key_at_each_request_and_keeps_none(chat_stub, monkeypatch):
    client = HttpChatClient(chat_stub.base_url, api_key_env="LOOPGUARD_TEST_JUDGE_KEY")
    monkeypatch.setenv("LOOPGUARD_TEST_JUDGE_KEY", "sk-old")
    restored = pickle.loads(pickle.dumps(client))
    assert b"sk-old" not in pickle.dumps(client)
    monkeypatch.setenv("LOOPGUARD_TEST_JUDGE_KEY", "sk-rotated")
    chat_stub.script("judge-a", {"analysis": "", "confidence": 0.0})
    restored({"model": "judge-a", "messages": []})
    assert chat_stub.requests[0]["headers"]["Authorization"] == "Bearer sk-rotated"
    monkeypatch.delenv("LOOPGUARD_TEST_JUDGE_KEY")
    with pytest.raises(JudgeError, match="the environment variable LOOPGUARD_TEST_JUDGE_KEY is not set"):
        restored({"model": "judge-a", "messages": []})
