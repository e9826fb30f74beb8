"""The checks of a fresh `repeated_units.ShortUnitFinder` over a text, fed
as `text_loop` feeds it: in pieces that end where the finder asks for its
next check (every `unit_check_every` characters, sooner while a run is under
way)."""

from __future__ import annotations

from detector.repeated_region import RepeatedRegion
from detector.repeated_units import ShortUnitFinder


def unit_checks(params, text: str, until: int | None = None) -> list[tuple[int, RepeatedRegion]]:
    """(check position, region) of every region found in `text[:until]`."""
    finder = ShortUnitFinder(params)
    text = text[:until]
    found = []
    at = 0
    while at < len(text):
        piece = text[at : at + finder.chars_to_check]
        found += [(at + len(piece), region) for region in finder.feed(piece, at)]
        at += len(piece)
    return found
