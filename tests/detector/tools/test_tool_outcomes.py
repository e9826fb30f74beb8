"""Seed 001's identical failing batches: warn at 2, force_text at 4, reset by
a success or a text reply."""

from __future__ import annotations

import pytest

from detector.tool_messages import NOTICES
from tests.detector.tools.stream import call, detections, only, result, run, turn

BATCH = "repeated_failing_batch"


def failing(name: str = "curl", **args) -> list[dict]:
    args = args or {"url": "https://broken.example"}
    return turn(call(name, **args), result(ok=False, output="404"))


def failing_turns(n: int) -> list[dict]:
    return [event for _ in range(n) for event in failing()]


@pytest.mark.parametrize(
    "n, expected",
    [
        (1, []),
        (2, [(BATCH, 0, 2, 2, 2, "warn")]),
        (3, [(BATCH, 0, 2, 2, 2, "warn"), (BATCH, 0, 3, 3, 3, "warn")]),
        (4, [(BATCH, 0, 2, 2, 2, "warn"), (BATCH, 0, 3, 3, 3, "warn"), (BATCH, 0, 4, 4, 4, "force_text")]),
        (
            5,
            [
                (BATCH, 0, 2, 2, 2, "warn"),
                (BATCH, 0, 3, 3, 3, "warn"),
                (BATCH, 0, 4, 4, 4, "force_text"),
                (BATCH, 0, 5, 5, 5, "force_text"),
            ],
        ),
    ],
)
def test_identical_failing_batches_warn_at_2_and_force_text_at_4(n, expected):
    assert run(only("tool_outcomes"), failing_turns(n)) == expected


def test_the_thresholds_are_configurable():
    found = run(only("tool_outcomes", warn_at=3, force_text_at=3), failing_turns(3))
    assert found == [(BATCH, 0, 3, 3, 3, "force_text")]


def test_a_success_resets_the_count():
    events = failing_turns(2) + turn(call("curl", url="https://broken.example"), result(ok=True, output="200"))
    events += failing_turns(2)
    assert run(only("tool_outcomes"), events) == [(BATCH, 0, 2, 2, 2, "warn"), (BATCH, 3, 5, 5, 2, "warn")]


def test_a_text_reply_resets_the_count():
    events = failing_turns(1) + turn({"type": "content", "text": "I cannot reach the site."}, reason="stop")
    events += failing_turns(2)
    assert run(only("tool_outcomes"), events) == [(BATCH, 1, 3, 3, 2, "warn")]


def test_a_user_message_resets_the_count():
    events = failing_turns(1) + [{"type": "user", "text": "try again"}] + failing_turns(1)
    assert run(only("tool_outcomes"), events) == []


def test_text_alongside_the_calls_is_not_a_text_reply():
    events = []
    for _ in range(2):
        events += turn({"type": "content", "text": "Retrying."}, call("curl", url="x"), result(ok=False))
    assert run(only("tool_outcomes"), events) == [(BATCH, 0, 2, 2, 2, "warn")]


def test_a_batch_counts_only_when_every_call_failed():
    events = []
    for _ in range(4):
        events += turn(call("a"), call("b"), result(ok=False), result(ok=True))
    assert run(only("tool_outcomes"), events) == []


def test_the_fingerprint_covers_the_whole_batch_in_order():
    events = []
    for _ in range(2):
        events += turn(call("a", n=1), call("b", n=2), result(ok=False), result(ok=False))
    (found,) = detections(only("tool_outcomes"), events)
    assert (found.start, found.end, found.at, found.period, found.repeats) == (0, 4, 4, 2, 2)
    assert found.unit == 'a({"n":1}) + b({"n":2})'
    assert found.extra == {"notice": NOTICES[BATCH]}
    swapped = turn(call("a", n=1), call("b", n=2), result(ok=False), result(ok=False))
    swapped += turn(call("b", n=2), call("a", n=1), result(ok=False), result(ok=False))
    assert run(only("tool_outcomes"), swapped) == []


def test_a_new_failing_batch_starts_the_count_at_1():
    events = failing("curl", url="a") + failing("curl", url="b") + failing("curl", url="b")
    assert run(only("tool_outcomes"), events) == [(BATCH, 1, 3, 3, 2, "warn")]


def test_results_are_matched_by_id():
    events = []
    for _ in range(2):
        events += turn(call("a", id="1"), call("b", id="2"), result(ok=False, id="2"), result(ok=False, id="1"))
    assert run(only("tool_outcomes"), events) == [(BATCH, 0, 4, 4, 2, "warn")]


def test_a_batch_missing_a_result_is_no_evidence():
    events = failing_turns(1) + turn(call("curl", url="https://broken.example"), call("ls")) + failing_turns(1)
    assert run(only("tool_outcomes"), events) == []


def test_batches_without_turn_events_end_at_the_next_call():
    events = [call("curl", url="x"), result(ok=False), call("curl", url="x"), result(ok=False)]
    assert run(only("tool_outcomes"), events) == [(BATCH, 0, 2, 2, 2, "warn")]


def test_results_without_ok_are_not_failures():
    events = []
    for _ in range(3):
        events += turn(call("curl", url="x"), result(ok=None, output="error?"))
    assert run(only("tool_outcomes"), events) == []


@pytest.mark.parametrize("size, expected", [(100, [(BATCH, 0, 200, 200, 2, "warn")]), (101, [])])
def test_batches_of_up_to_100_calls_are_followed(size, expected):
    events = []
    for _ in range(2):
        events += turn(*[call("rm", n=i) for i in range(size)], *[result(ok=False) for _ in range(size)])
    found = run(only("tool_outcomes"), events)
    assert found == expected
