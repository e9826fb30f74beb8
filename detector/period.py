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

`PeriodTracker` is the incremental form: `push` costs O(1) for an element
not in the window (a count of each element it holds answers), else
O(max_period) at C speed plus O(periods kept) in Python (a periodic tail's
multiples are implicit), and memory is O(max_period) elements,
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

    In a loop the tail is periodic, and every multiple of its period matches
    too (a line said again and again matches at periods 1, 2, 3…; two
    alternating lines at 2, 4, 6…). So the tracker keeps one live period, the
    base q with its run of L elements, and its multiples implicitly: period
    kq < L has exactly L - kq matches (its comparisons inside the run hold
    by periodicity; the one reaching past the run's start is the comparison
    that broke q's run). Only other periods are kept, in `_matches`. A push
    of an element the window does not hold (most of prose) is one dict
    look-up; otherwise it costs a C-speed search of the elements before the
    base run, and O(periods kept) in Python; a run of
    any period takes O(1) Python steps per push, not O(max_period / q).
    """

    __slots__ = ("max_period", "min_elements", "_recent", "_held", "_matches", "_base", "_base_len", "count")

    def __init__(self, max_period: int = 50, min_elements: int = 6):
        if max_period < 1 or min_elements < 2:
            raise ValueError("max_period must be >= 1 and min_elements >= 2")
        self.max_period = max_period
        self.min_elements = min_elements
        self._recent: deque = deque(maxlen=max_period)
        self.reset()

    def push(self, element: Hashable) -> bool:
        """Add one element (`current` tells the run it completes, if any);
        return whether some run goes on at the tail (see `live_periods`)."""
        recent, held = self._recent, self._held
        copies = held.get(element, 0)  # (in the window before this push)
        held[element] = copies + 1
        if self.count >= self.max_period:
            # The window is full: the append below drops its oldest element.
            oldest = recent[0]
            if held[oldest] == 1:
                del held[oldest]
            else:
                held[oldest] -= 1
        if not copies:
            # The common case in prose: a new element ends every run.
            self._matches = {}
            self._base = self._base_len = 0
            recent.append(element)
            self.count += 1
            return False
        available = len(recent)
        q, run = self._base, self._base_len
        if q and recent[-q] == element:
            # The base run goes on: the element sits at every distance kq <= run
            # (the implicit periods); search only the rest of the window.
            implicit = run if run < available else available  # (no call of `min`: a push of every copy)
            copies -= implicit // q
            self._base_len = run + 1
        else:
            q = implicit = 0
        old, matches = self._matches, {}
        i, stop = -1, available - implicit
        while copies:
            try:
                i = recent.index(element, i + 1, stop)
            except ValueError:
                # The rest lie inside the base run, off its multiples: a unit
                # holding this element twice ("A B A C").
                i, stop = stop - 1, available
                continue
            p = available - i
            if not q or p % q or p > run:
                matches[p] = old.get(p, 0) + 1
                copies -= 1
        if not q:
            self._rebase(matches)
        self._matches = matches
        recent.append(element)
        self.count += 1
        return bool(self._base or matches)

    def _rebase(self, matches: dict[int, int]) -> None:
        """The base run broke (or there was none): the smallest live period is
        the new base, and its multiples inside its run become implicit."""
        if not matches:
            self._base = self._base_len = 0
            return
        q = min(matches)
        run = matches[q] + q
        for p in range(q, min(run, self.max_period + 1), q):
            del matches[p]
        self._base, self._base_len = q, run

    def current(self) -> PeriodRun | None:
        """The smallest-period run at the tail now, or None."""
        limit = min(self.max_period, self.count // 2)
        q, run = self._base, self._base_len
        # Of the implicit periods only the base can qualify: a multiple has
        # fewer matches and needs more.
        based = q and q <= limit and run - q >= q and run >= self.min_elements
        for p in sorted(self._matches):
            if p > limit or (based and p > q):
                break
            m = self._matches[p]
            # m >= p: at least two whole copies, else a tail of p distinct
            # elements with no repeat at all would count as a run.
            if m >= p and m + p >= self.min_elements:
                return PeriodRun(period=p, length=m + p)
        return PeriodRun(period=q, length=run) if based else None

    def pushed(self, back: int) -> Hashable:
        """The element pushed `back` pushes ago (1: the last one), `back` at
        most `max_period` and the elements pushed."""
        return self._recent[-back]

    def live_periods(self) -> list[int]:
        """The periods whose run goes on at the tail (matches > 0), smallest first."""
        q = self._base
        implicit = range(q, min(self._base_len, self.max_period + 1), q) if q else ()
        return sorted([*implicit, *self._matches])

    def run_length(self, period: int) -> int:
        """Elements in the current run of `period` (0 when none)."""
        q = self._base
        if q and period % q == 0 and period < self._base_len:
            return self._base_len
        m = self._matches.get(period, 0)
        return m + period if m else 0

    def reset(self) -> None:
        self._recent.clear()
        self._held: dict = {}  # element -> its copies in `_recent`
        self._matches: dict[int, int] = {}  # period -> matches, for periods not implicit
        self._base = 0  # the base period (0: none)
        self._base_len = 0  # elements in the base period's run
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
