"""Blocks of a loop already reported, said again word for word, take their
lead and body from the block one period back and their key from the period
finder's window (`BlockCycleFinder._end_block`): the same as working them out."""

from __future__ import annotations

from detector.text_blocks import BODY, LEAD, RAW, BlockCycleFinder
from detector.text_loop import TextLoopParams


def test_a_reported_loops_blocks_keep_their_own_key_lead_and_body():
    finder = BlockCycleFinder(TextLoopParams())
    lines = [f"{indent}{word} is said again.\n" for indent, word in (("  ", "one"), ("", "two"), ("    ", "three"))]
    text = "".join(lines) * 12
    regions = finder.feed(text, 0)
    assert [(r.kind, r.start, r.repeats) for r in regions] == [("block_cycle", 2, 2)]
    # Each block ends at its full stop; the newline after it leads the next.
    assert finder.covered_until == len(text) - 1
    raws = ["\n" + line[:-1] for line in lines * 12]
    raws[0] = raws[0][1:]
    assert [(block[RAW], block[LEAD], block[BODY]) for block in finder._ring] == [
        (raw, len(raw) - len(raw.lstrip()), raw.strip()) for raw in raws
    ]
    # The keys the period finder was given: each block's own (no number to mask).
    assert [finder._tracker.pushed(back) for back in range(len(raws), 0, -1)] == [hash(raw.strip()) for raw in raws]
