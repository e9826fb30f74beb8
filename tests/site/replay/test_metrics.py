"""Precision, recall and delay over labelled sessions (pure functions)."""

from __future__ import annotations

import pytest

from loopguard_site.replay.metrics import LabelledOutcome, ProfileMetrics, profile_metrics, session_label


@pytest.mark.parametrize(
    ("tags", "label"),
    [(["loop"], "loop"), (["demo", "normal"], "normal"), (["demo"], None), (["loop", "normal"], None), ([], None)],
)
def test_a_sessions_tags_give_its_label(tags, label):
    assert session_label(tags) == label


@pytest.mark.parametrize(
    ("outcomes", "metrics"),
    [
        ([], ProfileMetrics(0, 0, 0, 0, None, None, None, None)),
        (
            [LabelledOutcome("loop", True, 10), LabelledOutcome("loop", True, 30), LabelledOutcome("loop", False),
             LabelledOutcome("normal", True, 4), LabelledOutcome("normal", False)],
            ProfileMetrics(3, 2, 2, 1, 2 / 3, 2 / 3, 20.0, 28.0),
        ),
        ([LabelledOutcome("normal", True, 0)], ProfileMetrics(0, 1, 0, 1, 0.0, None, None, None)),
        ([LabelledOutcome("loop", False)], ProfileMetrics(1, 0, 0, 0, None, 0.0, None, None)),
        ([LabelledOutcome("loop", True, 7)], ProfileMetrics(1, 0, 1, 0, 1.0, 1.0, 7, 7)),
    ],
)  # fmt: skip
def test_it_counts_hits_and_false_alarms_and_takes_delay_quantiles(outcomes, metrics):
    assert profile_metrics(outcomes) == metrics
