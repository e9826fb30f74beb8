"""A Monitor is kept between messages by pickling it (the live lab): one
with every built-in detector pickles, and the copy goes on exactly as the
original; a detector holding a local function is named as the one that
cannot be kept."""

from __future__ import annotations

import pickle

from detector import Monitor
from detector.chat_client import judge_client_for
from detector.config import Profile
from detector.llm_judge import LLMJudgeParams
from detector.registry import DETECTORS


def every_detector() -> Profile:
    params = {name: cls.Params() for name, cls in DETECTORS.items()}
    params["llm_judge"] = LLMJudgeParams(base_url="http://127.0.0.1:9/v1", model="judge")
    return Profile("every detector", params)


def agent_turn(n: int) -> list[dict]:
    return [
        {"type": "turn", "t": float(n)},
        {"type": "reasoning", "text": "I will run the tests again. " * 3},
        {"type": "content", "text": f"Attempt {n}: running the tests."},
        {"type": "tool_call", "name": "run_tests", "args": {"path": "tests/test_parser.py"}, "id": f"c{n}"},
        {"type": "finish", "reason": "tool_calls"},
        {"type": "tool_result", "id": f"c{n}", "ok": False, "output": "1 failed: test_parse_dates"},
    ]


def test_a_monitor_of_every_builtin_detector_pickles_and_goes_on_as_the_original():
    profile = every_detector()
    monitor = Monitor(profile, judge_client=judge_client_for(profile))
    assert [d.name for d in monitor.detectors] == list(DETECTORS)
    assert monitor.unpicklable_detectors() == {}
    for n in range(1, 6):
        for event in agent_turn(n):
            monitor.feed(event)
    copy = pickle.loads(pickle.dumps(monitor))
    later = [event for n in range(6, 12) for event in agent_turn(n)]
    found = [d.to_dict() for event in later for d in monitor.feed(event)]
    assert found, "the agent's repeated failing call is caught"
    assert [d.to_dict() for event in later for d in copy.feed(event)] == found


def test_a_detector_holding_a_local_function_is_named():
    profile = Profile("judged", {"llm_judge": LLMJudgeParams(model="judge")})

    def client(payload: dict) -> dict:
        return {}

    problems = Monitor(profile, judge_client=client).unpicklable_detectors()
    assert list(problems) == ["llm_judge"]
    assert "local object" in problems["llm_judge"]
