"""Seed 003's layers: tool-call dedup, failure records, backoff, health (its daily
quota is the lab's, per API token: loopguard_site/accounts/quota.py)."""

from __future__ import annotations

import pytest

from detector.backoff import backoff_delay, backoff_range, backoff_seconds, jitter_fraction
from detector.monitor import Monitor
from tests.detector.tools.stream import call, detections, only, result, run, turn

DUP = "duplicate_tool_call"


def calls(*names: str) -> list[dict]:
    return [call(name) for name in names]


# Layer 2: tool-call dedup.
@pytest.mark.parametrize(
    "names, expected",
    [
        ("ABA", []),
        ("ABAB", []),
        ("ABABA", [(DUP, 2, 5, 5, 3, "warn")]),
        ("ABACADA", [(DUP, 2, 5, 5, 3, "warn"), (DUP, 4, 7, 7, 4, "warn")]),
    ],
)
def test_a_call_made_for_the_third_time_fires_by_default(names, expected):
    assert run(only("tool_dedup"), calls(*names)) == expected


def test_the_seeds_dedup_fires_on_the_first_repeat_and_names_the_earlier_call():
    (found,) = detections(only("tool_dedup", min_occurrences=2), calls("A", "B", "C", "A"))
    assert (found.start, found.end, found.at, found.period, found.extra) == (0, 4, 4, 3, {"earlier": 0})
    assert found.message == "The AI repeated a tool call it already made (A({})); the result of call 0 can be reused."


def test_repeats_in_a_row_are_left_to_tool_repetition():
    assert run(only("tool_dedup", min_occurrences=2), calls("A", "A", "A")) == []
    assert run(only("tool_dedup", min_occurrences=2), calls("A", "A", "B", "A")) == [(DUP, 1, 4, 4, 3, "warn")]


@pytest.mark.parametrize("distinct, expected", [(100, [(DUP, 0, 101, 101, 2, "warn")]), (101, [])])
def test_the_lru_holds_100_calls_and_the_101st_evicts_the_oldest(distinct, expected):
    events = [call("get", n=i) for i in range(distinct)] + [call("get", n=0)]
    assert run(only("tool_dedup", min_occurrences=2), events) == [
        (t, s, distinct + 1, distinct + 1, r, a) for t, s, _, _, r, a in expected
    ]


def test_a_repeat_refreshes_the_lru_position():
    events = [call("get", n=i) for i in range(100)] + [call("get", n=0), call("get", n=100), call("get", n=0)]
    found = run(only("tool_dedup", min_occurrences=2), events)
    assert found == [(DUP, 0, 101, 101, 2, "warn"), (DUP, 100, 103, 103, 3, "warn")]


def test_a_changed_result_makes_the_earlier_one_stale():
    events = []
    for n in range(4):
        events += [call("run_tests"), result(output=f"{3 - n} failed"), call("edit", n=n), result()]
    assert run(only("tool_dedup"), events) == []


def test_an_unchanged_result_keeps_counting():
    events = []
    for n in range(3):
        events += [call("git_status"), result(output="clean"), call("edit", n=n), result()]
    assert run(only("tool_dedup"), events) == [(DUP, 2, 5, 5, 3, "warn")]


def test_a_failed_call_is_not_a_reusable_result():
    events = [call("A"), result(ok=False), call("B"), result(), call("A")]
    assert run(only("tool_dedup", min_occurrences=2), events) == []


def test_allowlisted_tools_are_not_deduplicated():
    assert run(only("tool_dedup", min_occurrences=2), calls("poll_job", "B", "poll_job")) == []


# Layer 3: failure records.
FAILED_AGAIN = "repeated_failure"


def attempt(ok: bool | None, name: str = "deploy") -> list[dict]:
    return [call(name, env="prod"), result(ok=ok, output="boom" if ok is False else "done")]


@pytest.mark.parametrize(
    "outcomes, expected",
    [
        ([False], []),
        ([False, False], []),
        ([False, False, None], [(FAILED_AGAIN, 0, 3, 3, 2, "warn")]),
        ([False, False, False, None], [(FAILED_AGAIN, 0, 3, 3, 2, "warn"), (FAILED_AGAIN, 0, 4, 4, 3, "warn")]),
    ],
)
def test_an_operation_that_failed_twice_fires_when_tried_again(outcomes, expected):
    events = [event for ok in outcomes for event in attempt(ok)]
    assert run(only("repeated_failure"), events) == expected


def test_the_seeds_failure_record_fires_on_the_first_retry():
    found = detections(only("repeated_failure", min_failures=1), attempt(False) + attempt(False))
    assert [(d.start, d.end, d.repeats, d.extra) for d in found] == [(0, 2, 1, {"failed_at": 0})]


def test_a_success_clears_the_failure_record():
    events = attempt(False) + attempt(False) + attempt(True) + attempt(None)
    assert run(only("repeated_failure"), events) == [(FAILED_AGAIN, 0, 3, 3, 2, "warn")]


def test_other_operations_are_not_affected():
    events = attempt(False) + attempt(False) + attempt(None, name="rollback")
    assert run(only("repeated_failure"), events) == []


def test_results_of_allowlisted_calls_stay_paired_with_their_calls():
    events = []
    for _ in range(2):
        events += turn(call("poll_job", job=1), call("deploy", env="prod"), result(ok=True), result(ok=False))
    events += [call("deploy", env="prod")]
    assert run(only("repeated_failure"), events) == [(FAILED_AGAIN, 1, 5, 5, 2, "warn")]


# Layer 4: exponential backoff.
@pytest.mark.parametrize(
    "errors, seconds",
    [(-1, 0.0), (0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (12, 2048.0), (13, 3600.0), (10**6, 3600.0)],
)
def test_backoff_doubles_from_1_second_up_to_an_hour(errors, seconds):
    assert backoff_seconds(errors) == seconds


@pytest.mark.parametrize(
    "errors, jitter, seconds",
    [(1, 0.10, 1.1), (1, 0.20, 1.2), (3, 0.15, 4.6), (12, 0.20, 2457.6), (13, 0.10, 3600.0), (40, 0.20, 3600.0)],
)
def test_backoff_jitter_adds_10_to_20_percent_and_never_passes_the_cap(errors, jitter, seconds):
    assert backoff_delay(errors, jitter) == seconds


def test_backoff_range_and_shape_parameters():
    assert backoff_range(4) == (8.8, 9.6)
    assert backoff_seconds(3, base=0.5, multiplier=3.0, cap=10.0) == 4.5
    assert backoff_seconds(4, base=0.5, multiplier=3.0, cap=10.0) == 10.0


def test_jitter_is_fixed_by_its_seed_and_inside_the_range():
    fractions = [jitter_fraction(f"{i}:{i % 7}") for i in range(500)]
    assert all(0.10 <= f < 0.20 for f in fractions)
    assert max(fractions) - min(fractions) > 0.09  # spread over the range, not one value
    assert jitter_fraction("12:3") == jitter_fraction("12:3")


def errors(n: int) -> list[dict]:
    return [event for i in range(n) for event in (call("fetch", n=i), result(ok=False, output="503"))]


def test_backoff_is_advised_from_the_third_consecutive_error():
    assert run(only("backoff"), errors(2)) == []
    (found,) = detections(only("backoff"), errors(3))
    assert (found.type, found.channel, found.start, found.end, found.at, found.repeats) == (
        "backoff_advised",
        "session",
        1,
        3,
        3,
        3,
    )
    assert found.extra["delay_range"] == [4.4, 4.8]
    assert found.extra["delay_s"] == backoff_delay(3, jitter_fraction("3:3"))
    assert 4.4 <= found.extra["delay_s"] <= 4.8


def test_the_same_stream_gets_the_same_advice():
    first = detections(only("backoff"), errors(6))
    second = detections(only("backoff"), errors(6))
    assert [d.extra for d in first] == [d.extra for d in second]
    assert [d.repeats for d in first] == [3, 4, 5, 6]


def test_a_success_ends_the_error_streak():
    events = errors(2) + [call("fetch"), result(ok=True)] + errors(2)
    assert run(only("backoff"), events) == []


# Health.
def timed(kind: str, t: float, **fields) -> dict:
    return {"type": kind, "t": t, **fields}


def working_until(t: float) -> list[dict]:
    return [timed("user", 0.0, text="go"), timed("turn", 1.0), timed("content", t - 0.5, text="Working on it")]


@pytest.mark.parametrize(
    "gap, expected",
    [
        (599.9, []),
        (600.0, [("stream_stalled", 0, 0, 0, 1, "warn")]),
        (1799.0, [("stream_stalled", 0, 0, 0, 1, "warn")]),
        (1800.0, [("stream_stalled", 0, 0, 0, 1, "warn"), ("stream_idle", 0, 0, 0, 1, "stop")]),
    ],
)
def test_a_gap_between_events_while_working_is_a_stall_then_a_dead_stream(gap, expected):
    events = working_until(10.0) + [timed("content", 9.5 + gap, text="...")]
    assert run(only("health"), events) == expected


def test_the_gap_is_reported_with_its_length():
    (found,) = detections(only("health"), working_until(10.0) + [timed("content", 709.5, text="...")])
    assert found.extra == {"gap_s": 700.0, "since_t": 9.5}
    assert found.message == "The stream stalled: no event for 700 s while the AI was working."


def test_waiting_for_the_user_is_not_a_stall():
    events = working_until(10.0) + [timed("finish", 11.0, reason="stop"), timed("user", 5000.0, text="next")]
    assert run(only("health"), events) == []


def test_waiting_for_a_tool_is_working():
    events = [
        timed("turn", 0.0),
        timed("tool_call", 1.0, name="build", args={}),
        timed("finish", 2.0, reason="tool_calls"),
    ]
    events.append(timed("tool_result", 900.0, ok=True, output="built"))
    assert run(only("health"), events) == [("stream_stalled", 1, 1, 1, 1, "warn")]


def test_events_without_time_are_not_timed():
    events = [{"type": "turn"}, {"type": "content", "text": "a"}, {"type": "content", "text": "b"}]
    assert run(only("health"), events) == []


def test_a_silent_live_stream_is_caught_by_tick_once_per_gap():
    monitor = only("health")
    run(monitor, working_until(50.0))
    assert monitor.tick(649.0) == []
    assert [d.type for d in monitor.tick(650.0)] == ["stream_stalled"]
    assert monitor.tick(900.0) == []
    assert [(d.type, d.action) for d in monitor.tick(1900.0)] == [("stream_idle", "stop")]
    assert monitor.stopped
    assert run(monitor, [timed("content", 2000.0, text="back")]) == []
    assert [d.type for d in monitor.tick(2600.0)] == ["stream_stalled"]


def test_default_monitor_ticks_through_every_detector():
    monitor = Monitor("default")
    run(monitor, working_until(50.0))
    assert [d.detector for d in monitor.tick(700.0)] == ["health"]


@pytest.mark.parametrize("n, expected", [(4, []), (5, [("consecutive_errors", 1, 5, 5, 5, "force_text")])])
def test_five_consecutive_errors_are_unhealthy(n, expected):
    assert run(only("health"), errors(n)) == expected


def test_consecutive_errors_fire_once_per_streak():
    events = errors(7) + [call("fetch"), result(ok=True)] + errors(5)
    assert run(only("health"), events) == [
        ("consecutive_errors", 1, 5, 5, 5, "force_text"),
        ("consecutive_errors", 9, 13, 13, 5, "force_text"),
    ]


def test_a_turn_helper_sanity():
    # guards the helpers the tables above rely on
    assert [e["type"] for e in turn(call("a"), result())] == ["turn", "tool_call", "finish", "tool_result"]
