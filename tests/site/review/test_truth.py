"""What labels make of an item and a session (review/truth.py): pure."""

from __future__ import annotations

import pytest

from loopguard_site.review.truth import ItemLabels, SessionTruth, final_label, session_truth

D1, D2 = "text_loop|block_cycle|content|10|50|60", "tool_dedup|duplicate_tool_call|tools|1|3|3"


@pytest.mark.parametrize(
    ("labels", "adjudicated", "final"),
    [
        ((), None, None),
        (("true_loop",), None, "true_loop"),
        (("true_loop", "false_positive"), None, None),
        (("true_loop", "false_positive", "false_positive"), None, "false_positive"),
        (("true_loop", "false_positive"), "true_loop", "true_loop"),
        (("false_positive", "false_positive"), "true_loop", "true_loop"),
    ],
)
def test_final_label(labels, adjudicated, final):
    assert final_label(labels, adjudicated) == final


@pytest.mark.parametrize(
    ("items", "detections", "truth"),
    [
        # a true loop: a loop, starting where the detection's region starts
        (
            [ItemLabels(D1, ("true_loop",), channel="content", starts=(10,))],
            {D1},
            SessionTruth("loop", {"content": 10}),
        ),
        # a missed loop: a loop from its span's start; the earliest of the reviewers' spans
        (
            [ItemLabels("session", ("missed_loop", "missed_loop"), channel="reasoning", starts=(40, 30))],
            set(),
            SessionTruth("loop", {"reasoning": 30}),
        ),
        # loop evidence wins over a clean session label
        (
            [ItemLabels("session", ("clean",)), ItemLabels(D2, ("true_loop",), channel="tools", starts=(1,))],
            {D2},
            SessionTruth("loop", {"tools": 1}),
        ),
        ([ItemLabels("session", ("clean",))], {D1}, SessionTruth("normal")),
        # every detection a false positive: clean
        ([ItemLabels(D1, ("false_positive",)), ItemLabels(D2, ("false_positive",))], {D1, D2}, SessionTruth("normal")),
        # one detection not labelled yet: unknown
        ([ItemLabels(D1, ("false_positive",))], {D1, D2}, SessionTruth(None)),
        # a tie: unknown until adjudicated
        ([ItemLabels(D1, ("false_positive", "true_loop"))], {D1}, SessionTruth(None)),
        ([ItemLabels(D1, ("false_positive", "true_loop"), "false_positive")], {D1}, SessionTruth("normal")),
        ([], set(), SessionTruth(None)),
    ],
)
def test_session_truth(items, detections, truth):
    assert session_truth(items, detections) == truth
