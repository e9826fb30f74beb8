"""The generic period finder of seed 000 (§2.3), written once.

Given a list of elements (blocks, lines, tool-call keys...), find a period p
(1..max_period) such that the tail of the list repeats with period p: the
last elements each equal the element p places before them.

Reading of the seed's "minimum repeated elements 6": the seed's own examples
count the elements *taking part in the run* (its list-type example: six lines
with period 2, "repeated 3 times, 6 lines in all, meets the threshold"), so a
run is reported when ``matches + p >= min_elements``, where ``matches`` is the
number of consecutive tail elements equal to the one p places before. A
candidate period must also satisfy ``p <= len(elements) // 2`` (the seed
iterates p up to ``min(max_period, len // 2)``), so at least two whole copies
are present. The smallest qualifying period wins.

`PeriodTracker` is the incremental form: `push` costs O(max_period) at C
speed plus O(live periods) in Python, and memory is O(max_period) elements,
whatever the stream length. `find_period` is the seed's batch function,
defined by pushing the list through a tracker, so both always agree.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable
from typing import NamedTuple


class PeriodRun(NamedTuple):
    """A periodic tail: `period` elements repeat; `length` elements are in the
    run (the last `length` elements of what was pushed). A tuple: one may be
    made at every push, so it must be cheap to build."""

    period: int
    length: int

    @property
    def repeats(self) -> float:
        return self.length / self.period


class PeriodTracker:
    """Incremental period finder over a stream of hashable elements.

    A run of one element said again and again (the commonest loop: the same
    line over and over) makes every period match. So the periods inside the
    tail run of equal elements are kept implicitly: with `same` equal
    elements at the tail, period p < same has exactly same - p matches (its
    comparisons inside the run all hold, the one reaching past the run's
    start fails). Only the other periods are kept, in `_matches`, so a push
    costs a C-speed count over the window plus O(periods kept), not
    O(max_period) in Python.
    """

    __slots__ = ("max_period", "min_elements", "_recent", "_matches", "_same", "count")

    def __init__(self, max_period: int = 50, min_elements: int = 6):
        if max_period < 1 or min_elements < 2:
            raise ValueError("max_period must be >= 1 and min_elements >= 2")
        self.max_period = max_period
        self.min_elements = min_elements
        self._recent: deque = deque(maxlen=max_period)
        self.reset()

    def push(self, element: Hashable) -> None:
        """Add one element (`current` tells the run it completes, if any)."""
        recent = self._recent
        available = len(recent)
        same = self._same + 1 if available and recent[-1] == element else 1
        # Periods p >= same whose run goes on or starts: an equal element sits p
        # back, before the tail run (those in it are the implicit periods).
        in_run = min(same - 1, available)
        copies = recent.count(element) - in_run if in_run < available else 0
        old, matches = self._matches, {}
        i = -1
        for _ in range(copies):
            i = recent.index(element, i + 1, available - in_run)
            p = available - i
            matches[p] = old.get(p, 0) + 1
        self._matches = matches
        self._same = same
        recent.append(element)
        self.count += 1

    def current(self) -> PeriodRun | None:
        """The smallest-period run at the tail now, or None."""
        limit = min(self.max_period, self.count // 2)
        same = self._same
        # Implicit periods: p < same has same - p matches, a run of `same`
        # elements; the smallest, p = 1, qualifies whenever any of them does.
        if same >= 2 and same >= self.min_elements and limit >= 1:
            return PeriodRun(period=1, length=same)
        for p in sorted(self._matches):
            if p > limit:
                break
            m = self._matches[p]
            # m >= p: at least two whole copies, else a tail of p distinct
            # elements with no repeat at all would count as a run.
            if m >= p and m + p >= self.min_elements:
                return PeriodRun(period=p, length=m + p)
        return None

    def live_periods(self) -> list[int]:
        """The periods whose run goes on at the tail (matches > 0), smallest first."""
        return [*range(1, min(self._same, self.max_period + 1)), *sorted(self._matches)]

    def run_length(self, period: int) -> int:
        """Elements in the current run of `period` (0 when none)."""
        m = self._same - period if period < self._same else self._matches.get(period, 0)
        return m + period if m else 0

    def reset(self) -> None:
        self._recent.clear()
        self._matches: dict[int, int] = {}  # period -> matches, for periods >= _same
        self._same = 0  # equal elements at the tail
        self.count = 0


def find_period(elements: Iterable[Hashable], max_period: int = 50, min_elements: int = 6) -> PeriodRun | None:
    """Seed 000's period check over a whole list.

    >>> find_period(["A", "B", "A", "B", "A", "B"])
    PeriodRun(period=2, length=6)
    >>> find_period(["A", "B", "A", "B", "A"]) is None
    True
    """
    tracker = PeriodTracker(max_period, min_elements)
    for element in elements:
        tracker.push(element)
    return tracker.current()
