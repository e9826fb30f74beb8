"""Precision, recall and delay of a profile over labelled sessions: pure
functions, no Django.

A session's label is the reviewers' verdict (review app) where there is
one; otherwise its tags (`session_label`): tagged "loop" it is a loop
session, tagged "normal" a normal one; with neither, or both, it is
unlabelled and left out.

- A session *is flagged* when the profile fired at least one detection on it.
- precision = flagged loop sessions / flagged labelled sessions;
  recall = flagged loop sessions / loop sessions.
- *Delay* of a flagged loop session = ``at - start`` of its first detection:
  how far the loop ran (characters, or tool calls on the tools channel)
  before it was caught. Sessions carry no labelled loop start yet, so the
  detection's own `start` stands in for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from detector.evaluation import percentile

LOOP, NORMAL = "loop", "normal"


def session_label(tags: Iterable[str]) -> str | None:
    """`loop`, `normal`, or None (unlabelled or contradictory)."""
    tags = set(tags)
    if (LOOP in tags) == (NORMAL in tags):
        return None
    return LOOP if LOOP in tags else NORMAL


@dataclass(frozen=True)
class LabelledOutcome:
    """One labelled session under one profile."""

    label: str
    flagged: bool
    delay: int | None = None  # of the first detection, when flagged


@dataclass(frozen=True)
class ProfileMetrics:
    loops: int
    normals: int
    true_positives: int
    false_positives: int
    precision: float | None
    recall: float | None
    median_delay: float | None
    p90_delay: float | None


def profile_metrics(outcomes: Iterable[LabelledOutcome]) -> ProfileMetrics:
    """The metrics over the outcomes (None where a ratio has no denominator).

    >>> m = profile_metrics([LabelledOutcome("loop", True, 40), LabelledOutcome("normal", True, 5),
    ...                      LabelledOutcome("loop", False), LabelledOutcome("normal", False)])
    >>> (m.precision, m.recall, m.median_delay)
    (0.5, 0.5, 40.0)
    """
    loops = normals = true_positives = false_positives = 0
    delays: list[int] = []
    for outcome in outcomes:
        if outcome.label == LOOP:
            loops += 1
            if outcome.flagged:
                true_positives += 1
                delays.append(outcome.delay)
        else:
            normals += 1
            false_positives += outcome.flagged
    flagged = true_positives + false_positives
    return ProfileMetrics(
        loops=loops,
        normals=normals,
        true_positives=true_positives,
        false_positives=false_positives,
        precision=true_positives / flagged if flagged else None,
        recall=true_positives / loops if loops else None,
        median_delay=percentile(delays, 0.5),
        p90_delay=percentile(delays, 0.9),
    )
