"""The default profile's text-loop detector: continuous detection on both
`reasoning` and `content`, from the first characters, at any length.

Two finders run side by side on each channel:

- `repeated_units.ShortUnitFinder` (type `short_unit`): a unit of up to
  `unit_max_chars` characters repeated back to back ("思考思考思考",
  "hahaha", "对，对，"), checked every `unit_check_every` characters and
  where a run under way will have what its unit needs;
- `text_blocks.BlockCycleFinder` (types `block_cycle`, `counter_cycle`):
  sentence, clause, line and paragraph cycles, numbered and counted copies,
  table rows, bullets, code and YAML, checked at every block boundary.

Both implement LoopGuard's own reading of seed 000 (types 3, 1 and 2) and
beat it: no checkpoints, thresholds that fall as the unit grows (a
passage of 300 characters or more is a loop at its second copy, one of 250
characters 125 characters into its third, a 60-character sentence halfway
into its third, "Wait," only after 27 copies), and
letter-free units (table rules, ASCII art, digits) held to a longer
region, letter-free lines of numbers (a grid's rows, a count) to
`grid_min_rows` rows (`text_blocks` says how letter-free text is decided),
and code in a fenced block (or text that opens as code, markup or data
with no fence: `raw_output`), which writes data out (a line said again, a
literal's items, a count), to more. The
character-level finder also takes units past `unit_max_chars`, up to
`long_unit_max_chars` (formulas and call chains with no space to cut them
into blocks, passages of more blocks than `block_max_period`). Reworded
copies are `near_duplicate`'s. A loop is reported once, by whichever finder sees it first; the
other finder stays quiet while that region goes on. A loop does not span a
turn: a `turn` event resets both channels (offsets keep counting).

Cost per event: O(chunk) plus, at a block boundary, O(block +
block_max_period), and at a unit check O(window); memory per channel is
bounded by the parameters (a window of 2 × `long_unit_max_chars`
characters and a ring of 64 × `template_min_copies` blocks), whatever
the stream length.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .events import TEXT_CHANNELS
from .params import action_param, param
from .repeated_region import RepeatedRegion
from .repeated_units import ShortUnitFinder
from .text_blocks import ASCII_MARKS, BOUNDARY_CHARS, BlockCycleFinder


@dataclass(frozen=True)
class TextLoopParams:
    unit_max_chars: int = param(32, low=8, high=64, step=4, doc="longest unit the character-level check looks for")
    long_unit_max_chars: int = param(
        3200, low=400, high=6000, step=200, doc="longest unit the character-level check looks for past unit_max_chars"
    )
    grid_min_rows: int = param(
        32,
        low=8,
        high=100,
        step=4,
        doc="copies a letter-free line (a grid's or table's row) or a blank form's row (fields, placeholders) needs",
    )
    unit_min_copies: int = param(4, low=3, high=10, step=1, doc="copies a short unit needs at least")
    unit_region_chars: int = param(
        40, low=16, high=160, step=8, doc="characters a short-unit run must cover (units with a letter)"
    )
    unit_region_letters: int = param(
        20,
        low=4,
        high=80,
        step=4,
        doc="letters a short-unit run must hold (so `n` × `n` × … is not a loop); a counted line with fewer is data",
    )
    unit_check_every: int = param(32, low=8, high=128, step=8, doc="most characters between two character-level checks")
    block_max_period: int = param(64, low=8, high=100, step=2, doc="longest cycle, in blocks, the block check finds")
    block_min_copies: int = param(2, low=2, high=8, step=1, doc="copies a block cycle needs at least")
    line_min_copies: int = param(4, low=2, high=8, step=1, doc="copies a cycle of one whole line needs at least")
    counter_min_copies: int = param(
        5, low=3, high=10, step=1, doc="copies a cycle whose numbers count up needs at least"
    )
    table_min_copies: int = param(
        35,
        low=10,
        high=60,
        step=5,
        doc="copies a counter read as a table needs: numbers each with their own step, rows of data under an id,"
        " a count from 1 (a month's days) or down to 0; and a loop's printout",
    )
    code_count_min_copies: int = param(
        100, low=25, high=300, step=25, doc="copies a counter in a code block needs (option lists, rows, enum members)"
    )
    template_min_copies: int = param(
        10, low=5, high=30, step=1, doc="copies a cycle of records (two lines or more) whose numbers change needs"
    )
    two_copy_chars: int = param(
        300, low=100, high=1000, step=50, doc="a copy shorter than this needs part of a third copy to be a loop"
    )
    block_region_chars: int = param(
        160, low=40, high=800, step=20, doc="characters a block cycle must cover (copies with a letter)"
    )
    symbol_region_chars: int = param(
        120, low=40, high=600, step=20, doc="characters a run must cover when its unit has no letter"
    )
    block_weak_cut_chars: int = param(
        80, low=24, high=400, step=8, doc="a block without punctuation ends at the first space after this many"
    )
    block_max_chars: int = param(400, low=100, high=2000, step=50, doc="a block is cut here whatever its content")
    action: str = action_param("stop")


class _ChannelFinders:
    __slots__ = ("units", "blocks")

    def __init__(self, params: TextLoopParams) -> None:
        self.blocks = BlockCycleFinder(params)
        # The block finder is fed each piece first: its `in_code` is current at a unit check.
        self.units = ShortUnitFinder(params, fences=self.blocks)

    def reset(self) -> None:
        self.units.reset()
        self.blocks.reset()


class TextLoopDetector(Detector):
    """Short-unit and block-cycle loops on `reasoning` and `content`."""

    name = "text_loop"
    Params = TextLoopParams
    builtin = {"default": {}}
    consumes = frozenset({"reasoning", "content", "turn", "finish"})
    wake_chars = BOUNDARY_CHARS
    mark_chars = ASCII_MARKS  # they end a block only when whitespace follows

    def __init__(self, params: TextLoopParams | None = None):
        super().__init__(params)
        self._channels = {channel: _ChannelFinders(self.params) for channel in TEXT_CHANNELS}

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        finders = self._channels.get(kind)
        if finders is None:
            if kind == "turn":
                for each in self._channels.values():
                    each.reset()
            elif kind == "finish":
                return self._flush(ctx)
            return []
        text = event["text"]
        offset = ctx.offsets[kind]
        units, blocks = finders.units, finders.blocks
        if (size := len(text)) < units.chars_to_check:
            # The common case: no unit check inside this chunk (and no call to
            # `units.feed`, which would only append it).
            units.pending.append(text)
            units.chars_to_check -= size
            found = blocks.feed(text, offset) if text else []
            if found:
                found = [r for r in found if r.start + r.period > units.covered_until]
        else:
            found = self._feed_pieces(finders, text, offset)
        # Text without a block boundary is only buffered up to the next
        # character-level check or the next weak cut of a block.
        # (A comparison, not min(): a builtin call costs more here.)
        room = blocks.quiet_room()
        self.quiet_room = room if room < units.chars_to_check else units.chars_to_check
        if not found:
            return found
        return [self._detection(region, kind, ctx.turn) for region in found]

    @staticmethod
    def _feed_pieces(finders: _ChannelFinders, text: str, offset: int) -> list[RepeatedRegion]:
        """Feed in pieces that end at the unit checks, so both finders see the
        text in position order whatever the chunking (split invariance). A
        region whose first copy lies inside the other finder's reported loop
        is that same loop, seen again: not reported twice."""
        units, blocks = finders.units, finders.blocks
        found: list[RepeatedRegion] = []
        while text:
            piece, text = text[: units.chars_to_check], text[units.chars_to_check :]
            # (Most pieces find nothing: no list is built for them.)
            regions = blocks.feed(piece, offset)
            if regions:
                found += [r for r in regions if r.start + r.period > units.covered_until]
            regions = units.feed(piece, offset)
            if regions:
                found += [r for r in regions if r.start + r.period > blocks.covered_until]
            offset += len(piece)
        return found

    def _flush(self, ctx: StreamContext) -> list[Detection]:
        """A finished request completes each channel's last block and unit check."""
        found = []
        for channel, finders in self._channels.items():
            end = ctx.offsets[channel]
            regions = [r for r in finders.blocks.flush(end) if r.start + r.period > finders.units.covered_until]
            regions += [r for r in finders.units.flush(end) if r.start + r.period > finders.blocks.covered_until]
            found += [self._detection(region, channel, ctx.turn) for region in regions]
        return found

    def _detection(self, region: RepeatedRegion, channel: str, turn: int) -> Detection:
        return Detection(
            detector=self.name,
            type=region.kind,
            channel=channel,
            start=region.start,
            end=region.end,
            at=region.at,
            unit=region.unit,
            period=region.period,
            repeats=region.repeats,
            action=self.params.action,
            message=region.describe(),
            turn=turn,
        )
