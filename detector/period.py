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

`PeriodTracker` is the incremental form: `push` costs O(max_period) and
memory is O(max_period) elements, whatever the stream length. `find_period`
is the seed's batch function, defined by pushing the list through a tracker,
so both always agree.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PeriodRun:
    """A periodic tail: `period` elements repeat; `length` elements are in the
    run (the last `length` elements of what was pushed)."""

    period: int
    length: int

    @property
    def repeats(self) -> float:
        return self.length / self.period


class PeriodTracker:
    """Incremental period finder over a stream of hashable elements."""

    __slots__ = ("max_period", "min_elements", "_recent", "_matches", "_live", "count")

    def __init__(self, max_period: int = 50, min_elements: int = 6):
        if max_period < 1 or min_elements < 2:
            raise ValueError("max_period must be >= 1 and min_elements >= 2")
        self.max_period = max_period
        self.min_elements = min_elements
        self._recent: deque = deque(maxlen=max_period)
        # _matches[p-1]: consecutive tail elements equal to the one p back.
        self._matches = [0] * max_period
        self._live = False  # some period has matches (else _matches is all zeros)
        self.count = 0

    def push(self, element: Hashable) -> PeriodRun | None:
        """Add one element; return the smallest-period run it completes, if any."""
        recent, matches = self._recent, self._matches
        if element not in recent:
            # No element within max_period equals it (a C-speed scan): every
            # run breaks, and no run can end here.
            if self._live:
                self._matches = [0] * self.max_period
                self._live = False
            recent.append(element)
            self.count += 1
            return None
        self._live = True
        available = len(recent)
        for p in range(1, self.max_period + 1):
            if p <= available and recent[-p] == element:
                matches[p - 1] += 1
            else:
                matches[p - 1] = 0
        recent.append(element)
        self.count += 1
        return self.current()

    def current(self) -> PeriodRun | None:
        """The smallest-period run at the tail now, or None."""
        limit = min(self.max_period, self.count // 2)
        for p in range(1, limit + 1):
            m = self._matches[p - 1]
            # m >= p: at least two whole copies, else a tail of p distinct
            # elements with no repeat at all would count as a run.
            if m >= p and m + p >= self.min_elements:
                return PeriodRun(period=p, length=m + p)
        return None

    def live_periods(self) -> list[int]:
        """The periods whose run goes on at the tail (matches > 0), smallest first."""
        if not self._live:
            return []
        return [p for p, m in enumerate(self._matches, start=1) if m]

    def run_length(self, period: int) -> int:
        """Elements in the current run of `period` (0 when none)."""
        m = self._matches[period - 1]
        return m + period if m else 0

    def reset(self) -> None:
        self._recent.clear()
        self._matches = [0] * self.max_period
        self._live = False
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
