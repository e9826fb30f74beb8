"""Whole agent sessions through the default profile: a healthy coding session
stays quiet; a stuck one climbs the action ladder."""

from __future__ import annotations

from detector.monitor import Monitor
from tests.detector.tools.stream import call, detections, result, turn


def at(t: float, events: list[dict]) -> list[dict]:
    """Stamp `events` with times from `t`, one second apart."""
    return [{**event, "t": t + i} for i, event in enumerate(events)]


def healthy_session() -> list[dict]:
    events = [{"type": "session", "model": "claude-sonnet-4-5"}, {"type": "user", "text": "Fix the failing test"}]
    steps = [
        turn(
            {"type": "content", "text": "Let me read the test first."},
            call("read_file", path="t.py"),
            result(output="T"),
        ),
        turn(call("grep", pattern="parse_date"), result(output="src/a.py:3")),
        turn(call("read_file", path="src/a.py"), result(output="A1")),
        turn(call("run_tests"), result(ok=False, output="1 failed")),
        turn(call("edit_file", path="src/a.py", old="x", new="y"), result(output="ok")),
        turn(call("run_tests"), result(ok=True, output="all passed")),
        turn(call("read_file", path="src/a.py"), result(output="A2")),
        turn(call("git_status"), result(output="M src/a.py")),
        turn({"type": "content", "text": "Fixed: the parser now accepts ISO dates."}, reason="stop"),
    ]
    t = 0.0
    for step in steps:
        events += at(t, step)
        t += 20.0
    events += at(4000.0, [{"type": "user", "text": "thanks"}])  # the user came back an hour later
    return events


def test_a_healthy_coding_session_raises_nothing():
    monitor = Monitor("default")
    assert detections(monitor, healthy_session()) == []
    assert not monitor.stopped


def stuck_session() -> list[dict]:
    """Seed 001's case: the same failing call, with self-corrections between."""
    events = [{"type": "user", "text": "Look at ChatView.tsx"}]
    for _ in range(6):
        events += turn(
            {"type": "content", "text": "我再次错误地使用了 ReadMediaFile！"},
            call("ReadMediaFile", path="src/ChatView.tsx"),
            result(ok=False, output="ChatView.tsx is a text file. Use Read to read text files."),
        )
    return events


def test_a_stuck_session_climbs_the_action_ladder():
    found = detections(Monitor("default"), stuck_session())
    assert [(d.detector, d.type, d.at, d.repeats, d.action) for d in found] == [
        ("tool_outcomes", "repeated_failing_batch", 2, 2, "warn"),
        ("tool_repetition", "consecutive_identical_tool_calls", 3, 3, "warn"),
        ("repeated_failure", "repeated_failure", 3, 2, "warn"),
        ("tool_outcomes", "repeated_failing_batch", 3, 3, "warn"),
        ("backoff", "backoff_advised", 3, 3, "warn"),
        ("repeated_failure", "repeated_failure", 4, 3, "warn"),
        ("tool_outcomes", "repeated_failing_batch", 4, 4, "force_text"),
        ("backoff", "backoff_advised", 4, 4, "warn"),
        ("repeated_failure", "repeated_failure", 5, 4, "warn"),
        ("tool_outcomes", "repeated_failing_batch", 5, 5, "force_text"),
        ("backoff", "backoff_advised", 5, 5, "warn"),
        ("health", "consecutive_errors", 5, 5, "force_text"),
        ("repeated_failure", "repeated_failure", 6, 5, "warn"),
        ("tool_outcomes", "repeated_failing_batch", 6, 6, "force_text"),
        ("backoff", "backoff_advised", 6, 6, "warn"),
    ]


def test_every_detection_serialises_to_the_contract():
    for detection in detections(Monitor("default"), stuck_session()):
        data = detection.to_dict()
        assert {"detector", "type", "channel", "start", "end", "at", "unit", "period", "repeats", "action"} <= set(data)
        assert data["channel"] in ("tools", "session") and data["message"]
