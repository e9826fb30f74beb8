"""Cohen's and Fleiss' kappa against textbook examples, exactly."""

from __future__ import annotations

from fractions import Fraction

import pytest

from loopguard_site.review.agreement import cohen_kappa, fleiss_kappa, group_kappa


def test_it_gives_cohens_kappa_of_the_textbook_two_reader_table():
    # Wikipedia, "Cohen's kappa": 50 proposals; both yes 20, A yes B no 5,
    # A no B yes 10, both no 15: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    assert cohen_kappa(pairs) == 0.4


def test_it_gives_cohens_kappa_of_a_second_textbook_table():
    # Wikipedia's second example: 45/15/25/15 -> p_o = 0.60, p_e = 0.54, kappa = 0.06/0.46.
    pairs = [("yes", "yes")] * 45 + [("yes", "no")] * 15 + [("no", "yes")] * 25 + [("no", "no")] * 15
    assert cohen_kappa(pairs) == float(Fraction(6, 46))


# Wikipedia, "Fleiss' kappa": 10 subjects, 14 raters, 5 categories.
FLEISS_TABLE = [
    (0, 0, 0, 0, 14),
    (0, 2, 6, 4, 2),
    (0, 0, 3, 5, 6),
    (0, 3, 9, 2, 0),
    (2, 2, 8, 1, 1),
    (7, 7, 0, 0, 0),
    (3, 2, 6, 3, 0),
    (2, 5, 3, 2, 2),
    (6, 5, 2, 1, 0),
    (0, 2, 2, 3, 7),
]


def test_it_gives_fleiss_kappa_of_the_textbook_table():
    items = [[str(c) for c, n in enumerate(row) for _ in range(n)] for row in FLEISS_TABLE]
    # P-bar = mean of P_i = (sum n_ij^2 - 14) / 182; P_e = sum of p_j^2 (column shares of 140 labels).
    p_bar = Fraction(sum(sum(n * n for n in row) - 14 for row in FLEISS_TABLE), 182 * 10)
    p_e = sum(Fraction(sum(col), 140) ** 2 for col in zip(*FLEISS_TABLE, strict=True))
    assert p_bar == Fraction(688, 1820)  # 0.378 as Wikipedia rounds it
    assert p_e == Fraction(4170, 19600)  # 0.213
    assert fleiss_kappa(items) == float((p_bar - p_e) / (1 - p_e))
    assert round(fleiss_kappa(items), 3) == 0.210


def test_it_refuses_items_with_different_numbers_of_labels():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([["a", "b"], ["a", "b", "b"]])


@pytest.mark.parametrize(
    ("pairs", "kappa"),
    [([], None), ([("a", "a"), ("a", "a")], None), ([("a", "b"), ("b", "a")], -1.0), ([("a", "a"), ("b", "b")], 1.0)],
)
def test_it_handles_empty_and_degenerate_tables(pairs, kappa):
    assert cohen_kappa(pairs) == kappa


def test_group_kappa_uses_cohen_for_two_reviewers_and_fleiss_for_more():
    two = {"i1": {"ann": "x", "bob": "x"}, "i2": {"ann": "x", "bob": "y"}, "i3": {"ann": "y"}}
    assert group_kappa(two) == ("cohen", cohen_kappa([("x", "x"), ("x", "y")]), 2)
    three = {
        "i1": {"ann": "x", "bob": "x", "cat": "x"},
        "i2": {"ann": "y", "bob": "y", "cat": "x"},
        "i3": {"ann": "x", "bob": "y"},
    }
    assert group_kappa(three) == ("fleiss", fleiss_kappa([["x", "x", "x"], ["y", "y", "x"]]), 2)
    assert group_kappa({"i1": {"ann": "x"}}) == ("", None, 0)
