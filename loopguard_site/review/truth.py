"""What reviewers' labels say about an item and a session: pure functions.

An *item* is what a reviewer labels: a detection (`true_loop` or
`false_positive`), identified by its signature so the same finding under
several profiles, or after a re-run replaced its row, is one item; or the
session itself (`missed_loop` with a span, or `clean`).

- The *final label* of an item is its adjudicated label when an admin set
  one, else the label a strict majority of its reviewers gave, else none
  (a tie is a disagreement waiting for adjudication).
- A session is a *loop* when some item's final label is `true_loop` or
  `missed_loop`. Loop evidence wins: one real loop makes it a loop session
  whatever else was labelled.
- Otherwise it is *normal* (clean) when its session item's final label is
  `clean`, or when it has detections and every one of its detection items
  (under any profile) has the final label `false_positive`.
- Otherwise it is unlabelled, and left out of metrics and tuning.

The *loop start* on a channel is the smallest `start` of the loop items
there (true-loop detections, missed-loop spans): delays count from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

TRUE_LOOP, FALSE_POSITIVE, MISSED_LOOP, CLEAN = "true_loop", "false_positive", "missed_loop", "clean"
DETECTION_LABELS = (TRUE_LOOP, FALSE_POSITIVE)
SESSION_LABELS = (MISSED_LOOP, CLEAN)
SESSION_ITEM = "session"
LOOP, NORMAL = "loop", "normal"  # the session labels metrics use (replay/metrics.py)


def final_label(labels: Iterable[str], adjudicated: str | None = None) -> str | None:
    """The adjudicated label, else the strict majority of `labels`, else None.

    >>> final_label(["true_loop", "true_loop", "false_positive"])
    'true_loop'
    >>> final_label(["true_loop", "false_positive"]) is None
    True
    """
    if adjudicated:
        return adjudicated
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


@dataclass(frozen=True)
class ItemLabels:
    """Every reviewer's current label of one item, and where it points."""

    item: str
    labels: tuple[str, ...]
    adjudicated: str | None = None
    channel: str = ""
    starts: tuple[int, ...] = ()  # the loop start each `true_loop`/`missed_loop` label gives

    @property
    def final(self) -> str | None:
        return final_label(self.labels, self.adjudicated)


@dataclass(frozen=True)
class SessionTruth:
    label: str | None  # LOOP, NORMAL or None
    loop_starts: dict[str, int] = field(default_factory=dict)


def session_truth(items: Iterable[ItemLabels], detection_items: set[str]) -> SessionTruth:
    """The session's truth from its labelled items; `detection_items` are the
    signatures of all its stored detections (under every profile)."""
    finals: dict[str, str | None] = {}
    loop_starts: dict[str, int] = {}
    for item in items:
        finals[item.item] = final = item.final
        if final in (TRUE_LOOP, MISSED_LOOP) and item.starts:
            loop_starts[item.channel] = min(loop_starts.get(item.channel, min(item.starts)), min(item.starts))
    if any(final in (TRUE_LOOP, MISSED_LOOP) for final in finals.values()):
        return SessionTruth(LOOP, loop_starts)
    if finals.get(SESSION_ITEM) == CLEAN:
        return SessionTruth(NORMAL)
    if detection_items and all(finals.get(item) == FALSE_POSITIVE for item in detection_items):
        return SessionTruth(NORMAL)
    return SessionTruth(None)
