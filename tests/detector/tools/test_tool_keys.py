from __future__ import annotations

import json

import pytest

from detector.tool_keys import PendingCalls, allowlisted, call_key, canonical_args
from detector.tool_repetition import ToolRepetition
from tests.detector.tools.stream import call, only, run


def key(args, name="search", ignored=frozenset()):
    return call_key({"type": "tool_call", "name": name, "args": args}, ignored)


def test_key_order_and_whitespace_do_not_matter():
    compact = json.loads('{"q":"loop","opts":{"limit":5,"case":true}}')
    spaced = json.loads('{ "opts" : { "case" : true ,\n "limit" : 5 },  "q" : "loop" }')
    assert key(compact) == key(spaced)
    assert key(compact).text == 'search({"opts":{"case":true,"limit":5},"q":"loop"})'


@pytest.mark.parametrize(
    "a, b",
    [
        ({"q": "loop"}, {"q": "loops"}),
        ({"q": 1}, {"q": "1"}),
        ({"q": [1, 2]}, {"q": [2, 1]}),
        ({"q": "x"}, {"q": "x", "page": 2}),
    ],
)
def test_different_arguments_are_different_calls(a, b):
    assert key(a) != key(b)


def test_the_tool_name_is_part_of_the_key():
    assert key({"path": "a"}, name="read_file") != key({"path": "a"}, name="ls")


def test_ignored_fields_are_dropped_at_any_depth():
    ignored = frozenset({"timestamp", "request_id"})
    a = key({"q": "x", "timestamp": 1, "meta": {"request_id": "r1", "page": 1}}, ignored=ignored)
    b = key({"meta": {"page": 1, "request_id": "r2"}, "q": "x", "timestamp": 2}, ignored=ignored)
    assert a == b
    assert canonical_args([{"timestamp": 1, "v": 2}], ignored) == '[{"v":2}]'


def test_the_shown_key_is_capped():
    long = key({"content": "x" * 500})
    assert len(long.text) == 160 and long.text.endswith("…")
    assert key({"content": "x" * 500}) != key({"content": "x" * 501})


def test_ignored_fields_are_configured_per_detector():
    calls = [call("search", q="x", request_id=f"r{i}", nonce=i) for i in range(3)]
    assert run(only("tool_repetition"), calls) == []
    found = run(only("tool_repetition", ignored_fields=["request_id", "nonce"]), calls)
    assert found == [("consecutive_identical_tool_calls", 0, 3, 3, 3, "warn")]


def test_by_default_every_field_counts():
    calls = [call("schedule", at="09:00", timestamp=i) for i in range(3)]
    assert run(only("tool_repetition"), calls) == []
    found = run(only("tool_repetition", ignored_fields=["timestamp"]), calls)
    assert found == [("consecutive_identical_tool_calls", 0, 3, 3, 3, "warn")]


@pytest.mark.parametrize(
    "name, exempt",
    [
        ("poll_job", True),
        ("check_poll", True),
        ("wait", True),
        ("wait_for_build", True),
        ("sleep", True),
        ("next", True),
        ("step", True),
        ("step_over", True),
        ("debugger_next", True),
        ("debugger_step", True),
        ("continue", True),
        ("read_file", False),
        ("get_reservation_details", False),
        ("search_direct_flight", False),
        ("await_user", False),
    ],
)
def test_default_allowlist(name, exempt):
    assert allowlisted(name, ToolRepetition.Params().allowlist) is exempt


def test_results_pair_by_id_then_by_order():
    pending = PendingCalls()
    a, b, c = key({"n": 1}), key({"n": 2}), key({"n": 3})
    pending.add(0, a, "id-a")
    pending.add(1, b, "id-b")
    assert pending.take({"type": "tool_result", "id": "id-b"}) == (1, b)
    assert pending.take({"type": "tool_result", "id": "id-zzz"}) is None
    assert pending.take({"type": "tool_result", "id": "id-a"}) == (0, a)
    pending.add(2, c, None)
    pending.add(3, a, None)
    assert pending.take({"type": "tool_result"}) == (2, c)
    assert pending.take({"type": "tool_result", "id": "unknown"}) == (3, a)
    assert pending.take({"type": "tool_result"}) is None


def test_pending_calls_are_bounded():
    pending = PendingCalls()
    for index in range(101):
        pending.add(index, key({"n": index}), None)
    assert pending.take({"type": "tool_result"})[0] == 1
