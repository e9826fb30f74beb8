"""The threshold search (profiles/tuning.py) on corpus rows: pure, no database."""

from __future__ import annotations

import pytest

from detector.config import loads_config
from detector.monitor import Monitor
from detector.params import ParamSpec
from loopguard_site.profiles.tuning import Evaluator, candidate_values, tune
from loopguard_site.replay.metrics import LabelledOutcome

from .conftest import LOOSE_TOML, corpus_streams

LOOSE = loads_config(LOOSE_TOML).select("loose")
BEFORE = {
    "loops": 3,
    "normals": 5,
    "true_positives": 3,
    "false_positives": 1,
    "precision": 0.75,
    "recall": 1.0,
    "f1": 6 / 7,
    "median_delay": 2.0,
    "p90_delay": 323.6,  # the text loop is caught at its third copy (issue 19: under 300 characters)
}


def test_it_removes_the_labelled_false_positive_and_keeps_every_loop():
    seen = []
    result = tune(corpus_streams(), LOOSE, progress=lambda done, total: seen.append((done, total)))

    assert result.changes == [{"detector": "tool_dedup", "param": "min_occurrences", "before": 2, "after": 3}]
    assert result.before == BEFORE
    assert result.after == {**BEFORE, "false_positives": 0, "precision": 1.0, "f1": 1.0}
    assert result.flips == [
        {"session": "tau-gpt4o-repeat-searches-later", "label": "normal", "before": True, "after": False}
    ]
    assert result.profile.detectors["tool_dedup"].min_occurrences == 3
    assert result.profile.detectors["tool_repetition"] == LOOSE.detectors["tool_repetition"]
    total = seen[0][1]
    assert seen == [(done, total) for done in range(1, result.evaluations + 1)] + [(total, total)]


def test_within_the_budget_fewer_false_positives_still_break_a_tie():
    # One flagged clean session is allowed, but with the same recall and
    # delay the candidate that flags none is better.
    within = tune(corpus_streams(), LOOSE, fp_budget=1)
    strict = tune(corpus_streams(), LOOSE)
    assert (within.changes, within.after) == (strict.changes, strict.after)


def test_it_scores_no_more_candidates_than_allowed():
    result = tune(corpus_streams(), LOOSE, max_evaluations=10)
    assert result.evaluations == 10
    # The first ten candidates are text_loop's, which change nothing here.
    assert result.changes == []


@pytest.mark.parametrize(
    ("spec", "current", "values"),
    [
        (ParamSpec("n", 3, low=2, high=6, step=1), 3, [2, 4, 5, 6]),
        (ParamSpec("n", 100, low=10, high=1000, step=10), 100, [10, 130, 260, 380, 510, 630, 750, 880, 1000]),
        (ParamSpec("x", 1.0, low=0.1, high=0.5, step=0.1), 1.0, [0.1, 0.2, 0.3, 0.4, 0.5]),
        (ParamSpec("flag", True), True, [False]),
        (ParamSpec("mode", "a", choices=("a", "b", "c")), "a", ["b", "c"]),
        (ParamSpec("free", 5), 5, []),
    ],
)
def test_candidate_values(spec, current, values):
    assert candidate_values(spec, current) == values


def test_scoring_detectors_one_by_one_equals_running_the_whole_profile():
    # The search re-runs only the detector a candidate changes; that is exact
    # because detectors never write to the stream context they share.
    streams = corpus_streams()
    by_parts = Evaluator(streams).outcomes(LOOSE.detectors)
    whole = []
    for stream in streams:
        monitor, first = Monitor(LOOSE, model=stream.model), None
        for event in stream.events:
            found = monitor.feed(event)
            if found and first is None:
                first = found[0]
        delay = None if first is None else max(first.at - stream.loop_starts.get(first.channel, first.start), 0)
        whole.append(LabelledOutcome(stream.label, first is not None, delay))
    assert by_parts == whole
    assert [o.flagged for o in whole] == [True, True, True, False, False, False, True, False]
