"""`RepeatedRegion`: what the text-loop finders (`repeated_units`,
`text_blocks`) report before the detector turns it into a `Detection`.

All positions are character offsets in the channel, session-wide:
`text[start:start + period] == unit` and the unit repeats (exactly, or with
only its numbers changed when `counted`) from `start` to `end`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RepeatedRegion:
    kind: str  # the detection type: "short_unit", "block_cycle" or "counter_cycle"
    start: int
    end: int
    at: int
    unit: str
    repeats: int
    blocks: int = 0  # blocks (sentences, lines, clauses) in one copy; 0 for a short unit

    @property
    def period(self) -> int:
        return len(self.unit)

    def describe(self) -> str:
        """A sentence a person understands."""
        if self.kind == "short_unit":
            what = f"the same {self.period:,}-character phrase"
        else:
            what = f"the same {self.period:,}-character passage"
            if self.blocks > 1:
                what += f" ({self.blocks} sentences or lines)"
            if self.kind == "counter_cycle":
                what += ", its numbers counting up,"
        return f"{what} repeated {self.repeats:,} times since offset {self.start:,}"
