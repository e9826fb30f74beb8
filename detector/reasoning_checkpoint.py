"""Seed 000's checkpoint detector, as designed (profile `seed000`).

What it detects: loops in the reasoning channel, checked only at fixed
character counts of each turn's reasoning ("checkpoints", 2000/3000/5000):

- at the first checkpoint, type 3 (``short_unit_loop``): a regular
  expression over the `short_window` (200) characters before it
  (1800..2000) for a unit of at least `min_unit` (2) characters repeated at
  least `min_repeats` (4) times in a row;
- at every later checkpoint, over the range since the previous one
  (2000..3000, then the tail re-check 3000..5000): type 1
  (``paragraph_loop``) on blocks split at 。.；;！!？?\\n and type 2
  (``ordered_list_loop``) on lines with their "1. " / "10. " numbers
  stripped, both through the one period finder of `detector.period` (max
  period 50, min elements 6; its docstring gives the reading of "min
  repeated elements").

Seed 000 resets per API request: state resets on every `turn` event, and
checkpoints count the turn's reasoning characters. A checkpoint fires when
the turn's reasoning first reaches or passes it; a chunk that jumps over
several checkpoints evaluates each, in order. The first check that finds a
loop ends the turn's checking (the seed aborts the stream there). Every
evaluation is recorded with `StreamContext.record_checkpoint`.

Readings of what the seed leaves open:

- Ranges are fixed: [checkpoint - 200, checkpoint) and [previous, current)
  of the turn's text, whatever the chunk that crossed the checkpoint was,
  so the result does not depend on how the stream was split. `at` is the
  checkpoint's position: where a character-by-character stream would have
  been cut.
- The range is cut at the checkpoint, so its last block or line is usually
  cut too; the period finder reads the tail of the list, so such a loop is
  seen only if a copy ends exactly at the checkpoint. That is the design,
  kept as it is.
- Empty blocks and empty lines are dropped (the seed's own example lists
  no empty block after the final "！"; keeping them would make "......" or
  blank lines a loop). Nothing else is normalised: the seed says not to
  touch whitespace.
- The type 3 regex is the seed's, ``(.{2,}?)\\1{3,}``: `.` does not match a
  newline (as in the TypeScript the seed targets), and eight or more of one
  character are four copies of a two-character unit, so they DO fire; only
  runs shorter than that ("....." or "哈哈哈") stay quiet, which is what the
  seed's threshold buys.

A detection's `period` is its unit's length in characters (the unit of types
1 and 2 is the text of one period, separators and list numbers included);
`extra["elements"]` gives the period in blocks or lines, `repeats` the whole
periods in the run.

Cost: O(len(text)) per event to keep the turn's first `checkpoints[-1]`
characters, plus one evaluation per checkpoint (a 200-character regex
search; a period search over at most 3000 characters' blocks, O(elements *
max_period)). Memory: at most `checkpoints[-1]` characters per stream,
released once the last checkpoint is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from .base import Detector, StreamContext
from .detection import Checkpoint, Detection
from .params import ConfigError, action_param, param
from .period import find_period

CHANNEL = "reasoning"
SHORT_UNIT = "short_unit_loop"  # seed type 3
PARAGRAPH = "paragraph_loop"  # seed type 1
ORDERED_LIST = "ordered_list_loop"  # seed type 2


@dataclass(frozen=True)
class Params:
    checkpoints: list = param([2000, 3000, 5000], doc="turn-local reasoning lengths to check at", tune=False)
    short_window: int = param(200, low=50, high=1000, step=50, doc="characters before checkpoint 1 that type 3 reads")
    min_unit: int = param(2, low=1, high=10, step=1, doc="shortest type-3 unit, in characters")
    min_repeats: int = param(4, low=2, high=20, step=1, doc="type-3 copies in a row that make a loop")
    max_period: int = param(50, low=1, high=200, step=5, doc="longest period (blocks or lines) of types 1 and 2")
    min_elements: int = param(6, low=2, high=40, step=1, doc="blocks or lines a type-1/2 run must span")
    separators: str = param("。.；;！!？?\n", doc="characters that end a type-1 block (and are dropped)", tune=False)
    list_number_pattern: str = param(r"\d+\.\s", doc="regex of a line's ordered-list number (type 2)", tune=False)
    action: str = action_param("stop")

    def __post_init__(self) -> None:
        points = self.checkpoints
        if not points or not all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in points):
            raise ConfigError("checkpoints: expected a list of positive whole numbers")
        if any(a >= b for a, b in zip(points, points[1:], strict=False)):
            raise ConfigError("checkpoints: must increase")
        if not self.separators:
            raise ConfigError("separators: expected at least one character")
        try:
            re.compile(self.list_number_pattern)
        except re.error as exc:
            raise ConfigError(f"list_number_pattern: not a regular expression: {exc}") from None


class Run(NamedTuple):
    """A loop found in a range: its region (offsets in the range), the
    unit's text, its period (characters for type 3, elements for 1 and 2)
    and how many whole copies there are."""

    start: int
    end: int
    unit: str
    period: int
    repeats: int


class ReasoningCheckpoint(Detector):
    """Seed 000: checks at 2000/3000/5000 characters of each turn's reasoning."""

    name = "reasoning_checkpoint"
    Params = Params
    builtin = {"seed000": {}}
    consumes = frozenset({"turn", "reasoning"})

    def __init__(self, params: Params | None = None):
        super().__init__(params)
        p = self.params
        self._short_unit = re.compile(rf"(.{{{p.min_unit},}}?)\1{{{p.min_repeats - 1},}}")
        self._block = re.compile("[^" + re.escape(p.separators) + "]+")
        self._list_number = re.compile(p.list_number_pattern)
        self._reset(0)

    def _reset(self, turn_start: int) -> None:
        self._turn_start = turn_start  # session offset of the turn's first reasoning character
        self._parts: list[str] = []  # the turn's first checkpoints[-1] characters
        self._length = 0  # the turn's reasoning characters read
        self._next = 0  # index of the next checkpoint to evaluate
        self._found = False

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "turn":
            self._reset(ctx.offsets[CHANNEL])
            return []
        checkpoints = self.params.checkpoints
        if kind != CHANNEL or self._found or self._next >= len(checkpoints):
            return []
        text = event["text"]
        room = checkpoints[-1] - self._length
        if room > 0:
            self._parts.append(text[:room])
        self._length += len(text)
        found: list[Detection] = []
        while self._next < len(checkpoints) and self._length >= checkpoints[self._next]:
            detection = self._evaluate(self._next, ctx)
            self._next += 1
            if detection is not None:
                found.append(detection)
                self._found = True
                break
        if self._found or self._next >= len(checkpoints):
            self._parts = []
        return found

    def _evaluate(self, index: int, ctx: StreamContext) -> Detection | None:
        """Run the checks of checkpoint `index`; record each; return the first loop."""
        checkpoints = self.params.checkpoints
        point = checkpoints[index]
        text = "".join(self._parts)
        self._parts = [text]
        if index == 0:
            checks = ((SHORT_UNIT, max(0, point - self.params.short_window)),)
        else:
            checks = ((PARAGRAPH, checkpoints[index - 1]), (ORDERED_LIST, checkpoints[index - 1]))
        base = self._turn_start
        for check, low in checks:
            run = self._CHECKS[check](self, text[low:point])
            ctx.record_checkpoint(
                Checkpoint(self.name, CHANNEL, point, base + low, base + point, check, check if run else "", ctx.turn)
            )
            if run is not None:
                return self._detection(check, run, base + low, base + point, ctx)
        return None

    def _short_unit_loop(self, text: str) -> Run | None:
        """Type 3: the seed's regex, leftmost match."""
        match = self._short_unit.search(text)
        if match is None:
            return None
        unit = match.group(1)
        return Run(match.start(), match.end(), unit, len(unit), (match.end() - match.start()) // len(unit))

    def _paragraph_loop(self, text: str) -> Run | None:
        """Type 1: blocks between separators (separators dropped)."""
        spans = [m.span() for m in self._block.finditer(text)]
        return self._periodic_tail(text, spans, [text[a:b] for a, b in spans])

    def _ordered_list_loop(self, text: str) -> Run | None:
        """Type 2: non-empty lines, each without its leading list number."""
        spans = [m.span() for m in re.finditer(r"[^\n]+", text)]
        elements = []
        for a, b in spans:
            number = self._list_number.match(text, a, b)
            elements.append(text[number.end() if number else a : b])
        return self._periodic_tail(text, spans, elements)

    def _periodic_tail(self, text: str, spans: list[tuple[int, int]], elements: list[str]) -> Run | None:
        found = find_period(elements, self.params.max_period, self.params.min_elements)
        if found is None:
            return None
        first = len(spans) - found.length
        unit = text[spans[first][0] : spans[first + found.period][0]]
        return Run(spans[first][0], spans[-1][1], unit, found.period, found.length // found.period)

    _CHECKS = {SHORT_UNIT: _short_unit_loop, PARAGRAPH: _paragraph_loop, ORDERED_LIST: _ordered_list_loop}

    def _detection(self, check: str, run: Run, low: int, point: int, ctx: StreamContext) -> Detection:
        start, end = low + run.start, low + run.end
        if check == SHORT_UNIT:
            what = f"the same {len(run.unit)}-character unit {_preview(run.unit)}"
        elif check == PARAGRAPH:
            what = f"the same {run.period}-block passage ({len(run.unit)} characters, {_preview(run.unit)})"
        else:
            what = f"the same {run.period}-line list passage, numbers aside ({_preview(run.unit)})"
        message = (
            f"{what} repeated {run.repeats} times since offset {start:,} "
            f"(seed 000 {check}, checked at {point - self._turn_start:,} characters of the turn's reasoning)"
        )
        extra = {"checkpoint": point - self._turn_start}
        if check != SHORT_UNIT:
            extra["elements"] = run.period  # the period in blocks or lines
        return Detection(
            detector=self.name,
            type=check,
            channel=CHANNEL,
            start=start,
            end=end,
            at=point,
            unit=run.unit,
            period=len(run.unit),
            repeats=run.repeats,
            action=self.params.action,
            message=message,
            turn=ctx.turn,
            extra=extra,
        )


def _preview(text: str, limit: int = 40) -> str:
    """A short quoted form of untrusted text for a message."""
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(shown)
