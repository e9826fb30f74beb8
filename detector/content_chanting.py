"""Seed 002 / Gemini CLI's content-chanting check (profile `gemini`).

What it detects: the same text chanted over and over in the model's
visible answer. This is `LoopDetectionService.checkContentLoop` of
google-gemini/gemini-cli (packages/core/src/services/loopDetectionService.ts),
with its constants as parameters:

- every 50-character window of the tracked history (`chunk_size`) is hashed
  and its start recorded under the hash, after checking that its text really
  equals the first window recorded there (hash collisions are not matches);
- a window that has occurred `min_occurrences` (10) times fires when its
  last 10 occurrences have a mean gap of at most `max_mean_gap` (250 = 5 x
  chunk size) and the texts between consecutive occurrences take at most
  `max_distinct_periods` (5 = 10 // 2) distinct values (a shared prefix of
  different list items is not a loop);
- the history is capped at `history` (5000) characters: windows that start
  before the last 5000 characters are forgotten;
- Markdown structure resets tracking (the history and every recorded window):
  code fences (and nothing inside a code block is tracked), table rows,
  list items, headings, blockquotes and divider lines.

The original looks only at the model's content events; so does this by
default (`channel = "content"`; "reasoning" runs the same check there
instead). It resets on every `tool_call` event, as the original does
("content chanting only happens in one single stream"), and on every `turn`,
as the original resets per prompt. After it fires it stays quiet until the
next turn (the original's `loopDetected` flag).

Where this differs from the original, and why:

- The original tests its Markdown patterns on each streamed chunk, so what
  resets depends on how the stream was split (a fence split over two chunks
  is never seen; a chunk that starts mid-line counts as a line start). Here
  they are tested on the lines of the channel, so any split of the same text
  gives the same result: a line start is the start of the turn or the
  character after a newline. Tracking resets at the character that completes
  the pattern (the space of "- ", the second "|" of a table row, the third
  backtick of a fence, the newline ending a divider line) and restarts with
  the next character. Windows are analysed as the original analyses them
  when every character arrives as its own chunk.
- Character classes are what the original meant: its list-item class
  ``[*-+]`` is the range "*" to "+", which misses "-", so "- " bullets never
  reset there; here "*", "+" and "-" all do. Its divider class
  ``[+-_=*...]`` is the range "+" to "_" (digits, capitals, punctuation);
  here a divider line is one made only of "-", "+", "_", "=", "*" and box
  drawing characters (U+2500-U+257F). A divider line is not tracked (it is
  held back until it ends or stops looking like a divider).
- A `turn` also leaves any open code block and starts a new line; the
  original's per-prompt `reset` keeps its `inCodeBlock` flag, so one
  unclosed fence would blind it for the whole next prompt.
- The original re-indexes every stored window when it truncates its
  history, O(history) per chunk once the history is full; here window starts
  are absolute channel offsets and the oldest is dropped from the front of
  its window's list, one per character.

Cost per event: O(len(text)) (per character one 50-character slice, one hash
and dict lookup, and forgetting one window start, which costs its window's
occurrence count, in practice a handful: a loop fires by the 10th; when a
window reaches 10 occurrences within the gap, up to `min_occurrences *
max_mean_gap` characters compared). Memory: at most
2 x `history` characters of text and `history` window records per stream.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .params import action_param, param

TYPE = "chanting_identical_sentences"

# The divider characters the original's class meant (see module docstring).
DIVIDER = frozenset("-+_=*") | frozenset(map(chr, range(0x2500, 0x2580)))
BULLETS = "*+-"
TABLE_RUN = "|+-"  # the original's [|+-]{3,} at a line start
DIGITS = "0123456789"  # JavaScript's \d

# Line states: what the current line could still turn out to start with.
START, HASHES, QUOTE, BULLET, NUMBER, NUMBER_DOT, PIPE, OTHER = range(8)
# States whose marker is completed by one whitespace character.
_NEEDS_SPACE = (HASHES, QUOTE, BULLET, NUMBER_DOT)


@dataclass(frozen=True)
class Params:
    chunk_size: int = param(50, low=10, high=200, step=10, doc="characters per hashed window")
    min_occurrences: int = param(10, low=3, high=50, step=1, doc="occurrences of one window that can make a loop")
    max_mean_gap: int = param(250, low=50, high=2000, step=50, doc="largest mean gap between the last occurrences")
    max_distinct_periods: int = param(5, low=1, high=20, step=1, doc="most distinct texts between occurrences")
    history: int = param(5000, low=500, high=50000, step=500, doc="characters of tracked history")
    channel: str = param("content", choices=("content", "reasoning"), doc="text channel to watch", tune=False)
    action: str = action_param("stop")
    # history's minimum (500) exceeds chunk_size's maximum (200): a window always fits.


class ContentChanting(Detector):
    """Gemini CLI's 50-character window hashing with Markdown resets."""

    name = "content_chanting"
    Params = Params
    builtin = {"gemini": {}}
    consumes = frozenset({"turn", "tool_call", "content", "reasoning"})

    def __init__(self, params: Params | None = None):
        super().__init__(params)
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._fired = False
        self._in_code = False
        self._ticks = 0  # backticks in a row
        self._new_line()
        self._reset_tracking()

    def _new_line(self) -> None:
        self._state = START
        self._indented = False
        self._run = 0  # [|+-] characters in a row from the line's first non-space
        self._line_chars = 0
        self._all_divider = True  # every character of the line so far is a divider character

    def _reset_tracking(self) -> None:
        self._buf = ""  # tracked text, from channel offset _buf_start
        self._buf_start = -1  # -1: nothing tracked since the reset
        self._held: deque = deque(maxlen=self.params.history)  # a line that may be a divider, not tracked yet
        self._windows: deque = deque()  # per window start from _win_start: its hash, or None (unrecorded)
        self._win_start = 0
        # window hash -> its start offset, or a list of them (oldest first) once it recurs
        self._index: dict[int, int | list[int]] = {}

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "turn":
            self._reset_turn()
            return []
        if kind == "tool_call":
            self._reset_tracking()
            return []
        if kind != self.params.channel or self._fired:
            return []
        return self._consume(event["text"], ctx.offsets[kind], ctx)

    def _consume(self, text: str, offset: int, ctx: StreamContext) -> list[Detection]:
        run = -1  # index in `text` of trackable characters not yet tracked
        for i, ch in enumerate(text):
            if self._state == OTHER and not self._run and not self._all_divider and ch not in "`\n":
                # the common case, mid-line plain text: nothing can reset here
                self._ticks = 0
                if not self._in_code and run < 0:
                    run = i
                continue
            fence = False
            if ch == "`":
                self._ticks += 1
                fence = self._ticks % 3 == 0
            else:
                self._ticks = 0
            marker = self._line_step(ch)
            hold = ch != "\n" and self._all_divider
            if fence or self._in_code or marker or hold:
                if run >= 0:
                    found = self._track(text[run:i], offset + run, ctx)
                    run = -1
                    if found:
                        return found
                if fence:
                    self._reset_tracking()
                    self._in_code = not self._in_code
                elif marker:
                    self._reset_tracking()
                elif hold and not self._in_code:
                    self._held.append(ch)
                continue
            if self._held:
                held = "".join(self._held)
                self._held.clear()
                found = self._track(held, offset + i - len(held), ctx)
                if found:
                    return found
            if run < 0:
                run = i
        if run >= 0:
            return self._track(text[run:], offset + run, ctx)
        return []

    def _line_step(self, ch: str) -> bool:
        """Advance the line state by one character; True when it completes a
        reset marker (list item, number, heading, quote, table, divider line)."""
        if ch == "\n":
            marker = self._state in _NEEDS_SPACE or (self._all_divider and self._line_chars > 0)
            self._new_line()
            return marker
        self._line_chars += 1
        self._all_divider = self._all_divider and ch in DIVIDER
        state = self._state
        if state == OTHER and not self._run:
            return False
        space = ch.isspace()
        if state == START:
            if space:
                self._indented = True
                return False
            self._run = 1 if ch in TABLE_RUN else 0
            if ch == "#" and not self._indented:
                self._state = HASHES
            elif ch == ">" and not self._indented:
                self._state = QUOTE
            elif ch in BULLETS:
                self._state = BULLET
            elif ch == "|":
                self._state = PIPE
            elif ch in DIGITS:
                self._state = NUMBER
            else:
                self._state = OTHER
            return False
        if space and state in _NEEDS_SPACE:
            return self._marker()
        if self._run:
            if ch in TABLE_RUN:
                self._run += 1
                if self._run >= 3:
                    return self._marker()
            else:
                self._run = 0
        if state == PIPE:
            return ch == "|" and self._marker()
        if state == HASHES and ch == "#":
            return False
        if state == NUMBER and ch in DIGITS:
            return False
        self._state = NUMBER_DOT if state == NUMBER and ch == "." else OTHER
        return False

    def _marker(self) -> bool:
        self._state = OTHER
        self._run = 0
        return True

    def _track(self, piece: str, pos: int, ctx: StreamContext) -> list[Detection]:
        """Append `piece` (channel offset `pos`) to the history and analyse
        every window it completes, one character at a time."""
        p = self.params
        size, cap, threshold = p.chunk_size, p.history, p.min_occurrences
        if self._buf_start < 0:
            self._buf_start = self._win_start = pos
        if len(self._buf) > 2 * cap:  # trim now and then: amortised O(1) per character
            self._buf_start += len(self._buf) - cap
            self._buf = self._buf[-cap:]
        self._buf += piece
        buf, base = self._buf, self._buf_start
        windows, index, win_start = self._windows, self._index, self._win_start
        for end in range(pos + 1, pos + len(piece) + 1):
            # forget windows that start before the last `cap` characters
            while win_start < end - cap:
                key = windows.popleft()
                if key is not None:
                    starts = index[key]
                    if type(starts) is int or len(starts) == 1:
                        del index[key]
                    else:
                        del starts[0]  # short lists: a loop fires within a few copies
                win_start += 1
            start = end - size
            if start < win_start:
                continue
            chunk = buf[start - base : end - base]
            key = hash(chunk)
            starts = index.get(key)
            if starts is None:
                index[key] = start  # one occurrence: an int, not a queue
            else:
                first = starts if type(starts) is int else starts[0]
                if buf[first - base : first - base + size] != chunk:
                    key = None  # a hash collision: the original does not record it
                elif type(starts) is int:
                    index[key] = [starts, start]
                else:
                    starts.append(start)
                    if len(starts) >= threshold:
                        detection = self._check(buf, base, starts, end, ctx)
                        if detection is not None:
                            self._fired = True
                            return [detection]
            windows.append(key)
        self._win_start = win_start
        return []

    def _check(self, buf: str, base: int, starts: list[int], at: int, ctx: StreamContext) -> Detection | None:
        """The original's test on the last occurrences of one window."""
        p = self.params
        recent = starts[-p.min_occurrences :]
        mean_gap = (recent[-1] - recent[0]) / (p.min_occurrences - 1)
        if mean_gap > p.max_mean_gap:
            return None
        periods = {buf[a - base : b - base] for a, b in zip(recent, recent[1:], strict=False)}
        if len(periods) > p.max_distinct_periods:
            return None
        unit = buf[recent[-2] - base : recent[-1] - base]
        start, end = recent[0], recent[-1] + p.chunk_size
        message = (
            f"the same {p.chunk_size}-character text appeared {p.min_occurrences} times within "
            f"{end - start:,} characters (mean gap {mean_gap:.0f}) since offset {start:,}; "
            f"it repeats every {len(unit)} characters: {unit[:60]!r}"
        )
        return Detection(
            detector=self.name,
            type=TYPE,
            channel=p.channel,
            start=start,
            end=end,
            at=at,
            unit=unit,
            period=len(unit),
            repeats=p.min_occurrences,
            action=p.action,
            message=message,
            turn=ctx.turn,
            extra={"mean_gap": mean_gap, "distinct_periods": len(periods)},
        )
