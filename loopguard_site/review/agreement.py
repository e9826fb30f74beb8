"""Inter-reviewer agreement: pure functions, no Django.

Cohen's kappa for two reviewers over the items both labelled; Fleiss' kappa
for more, over items that each carry the same number of labels. Both
compute in exact fractions and return a float (None where kappa is
undefined: no items, or chance agreement already 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters; `pairs` holds (rater A's label, rater B's
    label) per item.

    >>> cohen_kappa([("yes", "yes"), ("no", "no"), ("yes", "no"), ("no", "no")])
    0.5
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = Fraction(sum(a == b for a, b in pairs), n)
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    chance = sum(Fraction(first[c] * second[c], n * n) for c in first.keys() | second.keys())
    if chance == 1:
        return None
    return float((observed - chance) / (1 - chance))


def fleiss_kappa(items: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa; `items` holds each item's labels (one per rater), every
    item with the same number (at least two) of labels.

    >>> fleiss_kappa([["a", "a", "a"], ["b", "b", "b"]])
    1.0
    """
    if not items:
        return None
    raters = len(items[0])
    if raters < 2 or any(len(labels) != raters for labels in items):
        raise ValueError("Fleiss' kappa needs the same number (two or more) of labels on every item")
    counts = [Counter(labels) for labels in items]
    total = len(items) * raters
    shares: Counter[str] = Counter()
    for count in counts:
        shares.update(count)
    agreement = sum(
        Fraction(sum(k * (k - 1) for k in count.values()), raters * (raters - 1)) for count in counts
    ) / len(items)
    chance = sum(Fraction(k, total) ** 2 for k in shares.values())
    if chance == 1:
        return None
    return float((agreement - chance) / (1 - chance))


def group_kappa(ratings: dict[str, dict[str, str]]) -> tuple[str, float | None, int]:
    """Agreement of one group (a detector on one model): `ratings` maps each
    item to {reviewer: label}. Returns (method, kappa, items used).

    Two reviewers in the group: Cohen's kappa over the items both labelled.
    More: Fleiss' kappa over the items labelled by the most common number
    (two or more) of reviewers, the larger number on a tie. Fewer than two
    labels on every item: ("", None, 0).
    """
    reviewers = {reviewer for labels in ratings.values() for reviewer in labels}
    shared = [labels for labels in ratings.values() if len(labels) >= 2]
    if not shared:
        return "", None, 0
    if len(reviewers) == 2:
        a, b = sorted(reviewers)
        pairs = [(labels[a], labels[b]) for labels in shared]
        return "cohen", cohen_kappa(pairs), len(pairs)
    sizes = Counter(len(labels) for labels in shared)
    size = max(sizes, key=lambda n: (sizes[n], n))
    rows = [list(labels.values()) for labels in shared if len(labels) == size]
    return "fleiss", fleiss_kappa(rows), len(rows)
