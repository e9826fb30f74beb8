"""The one generic period finder (detector/period.py): batch `find_period`
and incremental `PeriodTracker` agree, with the reading documented there
(a run spans `matches + period` elements and holds two whole copies)."""

from __future__ import annotations

import random

import pytest

from detector.period import PeriodRun, PeriodTracker, find_period


@pytest.mark.parametrize(
    ("elements", "expected"),
    [
        (list("AAAAAA"), PeriodRun(1, 6)),
        (list("ABABAB"), PeriodRun(2, 6)),
        (list("ABCABC"), PeriodRun(3, 6)),
        (list("ABCDABCD"), PeriodRun(4, 8)),
        (list("xyz") + list("ABCDE") * 2, PeriodRun(5, 10)),
        (list("x") + ["p", "q"] * 10, PeriodRun(2, 20)),
        ([f"line {i % 7}" for i in range(21)], PeriodRun(7, 21)),
        # the smallest qualifying period wins
        (list("AAAAAAAA"), PeriodRun(1, 8)),
    ],
)
def test_periods(elements, expected):
    assert find_period(elements) == expected


@pytest.mark.parametrize(
    ("elements", "expected"),
    [
        (list("AAAAAA"), PeriodRun(1, 6)),  # 5 matches + 1 = 6: at the threshold
        (list("AAAAA"), None),  # 5 elements: just under
        (list("ABABAB"), PeriodRun(2, 6)),
        (list("BABAB"), None),
        (list("ABCABC"), PeriodRun(3, 6)),
        (list("BCABC"), None),
        # period 6 needs two whole copies (12 elements), not 6 elements
        (list("ABCDEF"), None),
        (list("ABCDEFABCDE"), None),
        (list("ABCDEFABCDEF"), PeriodRun(6, 12)),
        # twelve distinct elements are no run of period 6
        (list("ABCDEFGHIJKL"), None),
    ],
)
def test_threshold_edges(elements, expected):
    assert find_period(elements, max_period=50, min_elements=6) == expected


def test_only_the_tail_counts():
    assert find_period(list("AAAAAAAAB")) is None
    assert find_period(list("AAAAAAB") + list("CD") * 3) == PeriodRun(2, 6)


def test_max_period_limits_the_search():
    elements = [str(i) for i in range(30)] * 2
    assert find_period(elements, max_period=30) == PeriodRun(30, 60)
    assert find_period(elements, max_period=29) is None


def test_min_elements_parameter():
    assert find_period(list("ABAB"), min_elements=4) == PeriodRun(2, 4)
    assert find_period(list("ABAB"), min_elements=5) is None
    assert find_period(list("ABABAB"), min_elements=7) is None


def test_empty_list():
    assert find_period([]) is None


def test_single_element():
    assert find_period(["A"]) is None
    assert find_period(["A"], min_elements=2) is None


def test_two_equal_elements_at_min_two():
    assert find_period(["A", "A"], min_elements=2) == PeriodRun(1, 2)


def test_bad_arguments():
    with pytest.raises(ValueError):
        PeriodTracker(max_period=0)
    with pytest.raises(ValueError):
        PeriodTracker(min_elements=1)


def test_repeats_property():
    assert PeriodRun(3, 9).repeats == 3.0


@pytest.mark.parametrize("seed", range(20))
def test_incremental_equals_batch_on_every_prefix(seed):
    rng = random.Random(seed)
    alphabet = "ABC"[: rng.randint(1, 3)]
    elements = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
    # splice in a periodic stretch so runs of several periods occur
    unit = [rng.choice("ABCD") for _ in range(rng.randint(1, 6))]
    elements += unit * rng.randint(1, 5)
    max_period, min_elements = rng.randint(1, 8), rng.randint(2, 10)
    tracker = PeriodTracker(max_period, min_elements)
    for n, element in enumerate(elements, 1):
        tracker.push(element)
        assert tracker.current() == find_period(elements[:n], max_period, min_elements)
        assert tracker.current() == _brute_force(elements[:n], max_period, min_elements)


@pytest.mark.parametrize("seed", range(40))
def test_run_length_and_live_periods_equal_brute_force_on_every_prefix(seed):
    # Runs of every period (whose multiples the tracker keeps implicitly),
    # units holding an element twice ("ABAC"), runs longer than the window,
    # and runs broken and restarted.
    rng = random.Random(seed)
    elements = []
    while len(elements) < 160:
        unit = [rng.choice("ABCD") for _ in range(rng.choice((1, 1, 2, 2, 3, 4, 5)))]
        elements += unit * rng.randint(1, 16)
    max_period, min_elements = rng.randint(1, 24), rng.randint(2, 8)
    tracker = PeriodTracker(max_period, min_elements)
    for n, element in enumerate(elements, 1):
        tracker.push(element)
        lengths = {p: _run_length(elements[:n], p) for p in range(1, max_period + 1)}
        assert {p: tracker.run_length(p) for p in lengths} == lengths
        assert tracker.live_periods() == [p for p, length in lengths.items() if length]
        assert tracker.current() == _brute_force(elements[:n], max_period, min_elements)


def _run_length(elements, p):
    """Elements in the tail run of period `p`, the slow, obvious way."""
    matches = 0
    for i in range(len(elements) - 1, p - 1, -1):
        if elements[i] != elements[i - p]:
            break
        matches += 1
    return matches + p if matches else 0


def _brute_force(elements, max_period, min_elements):
    """The reading of period.py, written the slow, obvious way."""
    for p in range(1, min(max_period, len(elements) // 2) + 1):
        matches = 0
        for i in range(len(elements) - 1, p - 1, -1):
            if elements[i] != elements[i - p]:
                break
            matches += 1
        if matches >= p and matches + p >= min_elements:
            return PeriodRun(p, matches + p)
    return None


def test_reset_forgets_everything():
    tracker = PeriodTracker(max_period=3, min_elements=4)
    for element in "ABABAB":
        tracker.push(element)
    assert tracker.current() == PeriodRun(2, 6)
    assert tracker.run_length(2) == 6
    tracker.reset()
    assert (tracker.current(), tracker.count, tracker.run_length(2)) == (None, 0, 0)
    for element in "AAA":  # the run before the reset does not count
        tracker.push(element)
    assert (tracker.current(), tracker.run_length(1), tracker.live_periods()) == (None, 3, [1, 2])
