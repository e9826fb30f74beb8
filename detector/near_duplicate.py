"""Near-duplicate (paraphrase) loops: the same passage said again and again
with a word or two changed on each pass, or a rotation of two or three
paraphrases, in English or Chinese — loops the exact finders of
`text_loop` cannot see, since no two copies are equal. The period logic
is seed 000's (§2.3), with "equal" replaced by "similar".

The stream is cut into segments after `. ! ? 。 ！ ？` and newlines (a
segment with no mark is cut at `max_segment_chars`). A segment's tokens are
its words (letters only, lower-cased: numbers are `text_loop`'s counters)
and, for Chinese, its character bigrams; a segment with fewer than
`min_tokens` distinct tokens (code, table rows, headings, "Wait.") is left
out, neither compared nor breaking a run. Each segment is compared with each
of the `max_period` segments before it by word-set Jaccard similarity; a
period d runs while every segment is similar (≥ `similarity`) to the one d
segments back.

A run of period d fires once it holds `min_copies` copies (d × (copies − 1)
similar pairs) over `region_chars` characters (a Chinese character counts as
`HAN_CHAR_WEIGHT`: a passage in English runs three to four times as many
characters as in Chinese), and at least one pair is not
identical in its words (identical copies are `text_loop`'s, which stops them
sooner). Once fired, the run is reported once while it goes on.

Ambiguous classes, decided by length and evidence: a list of parallel
sentences ("The function returns the sum…", "…the product…") or a poem's
refrain is similar for a few segments, not for `min_copies` whole copies
over `region_chars` characters; a training log or a test file has lines of
too few words, or words identical from line to line (numbers aside): quiet.
So is a copy of several segments said again in the same words with its
numbers counting (a song's verse counting down its bottles, its two lines
alike): its segments are similar to each other, but it is `text_loop`'s
counter to judge, not a rewording.
Nothing in a fenced code block (from a line opening with three backticks
to the next) is read, nor text that opens as code, markup or data with
no fence (a structured output's JSON: `raw_output.opening`):
classes and methods documented alike ("Raised for the "no such frame"
error."), a schema's descriptions, are code and data, and a loop said
word for word in them is `text_loop`'s.

Cost: a chunk without a segment mark is a search for one and an append;
a segment end costs O(segment) to tokenize plus at most
`max_period` set intersections of small sets (C speed). Memory per channel:
the current segment (at most `max_segment_chars`), 2 × `max_period` token sets,
and the tokens of up to `max_period` recent segments by their text (most of
them the same objects as the ring's).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .events import TEXT_CHANNELS
from .params import action_param, param
from .raw_output import opening

SEGMENT_MARKS = frozenset(".!?。！？\n")
SEGMENT_END = re.compile(r"[.!?。！？\n]")
# A run of word characters holding a letter: an identifier ("test_add_2") is
# one word. Written to open with one character (`\w`, then: it was a letter,
# or digits and underscores lead to one), not `\w*[^\W\d_]\w*`, the same
# words: a pattern that opens with a character set is searched for in C
# (the regular expression engine skips to the next word character), one that
# opens with a repeat is tried at every position; half the cost of a segment.
WORD = re.compile(r"\w(?:(?<=[^\W\d_])|[\d_]*[^\W\d_])\w*")
DIGITS = re.compile(r"\d\d*")  # `\d+`, opening with a character set (see WORD)
CJK = re.compile(r"[\u3400-\u9fff]")
# What a Chinese character counts for in `region_chars`, and (one extra count
# per character) how it is found.
HAN_CHAR_WEIGHT = 3
HAN_CHARS = re.compile(CJK.pattern + "+")
# ASCII text, as bytes -> its word characters lower-cased (digits as "0"),
# every other character a space: its words (`WORD`) are its runs that hold
# a letter, digit runs squeezed to one "0". A byte table: `bytes.translate`
# is a table look-up per character in C, `str.translate` a dict look-up.
ASCII_WORD_RUNS = bytes(
    ord("0") if chr(c).isdigit() else ord(chr(c).lower()) if chr(c).isalpha() or chr(c) == "_" else ord(" ")
    for c in range(256)
)
ZERO_RUNS = re.compile("00+")
PROSE_SHARE = 0.75


@dataclass(frozen=True)
class NearDuplicateParams:
    similarity: float = param(0.5, low=0.3, high=0.9, step=0.05, doc="word-set Jaccard two copies need at least")
    min_tokens: int = param(6, low=3, high=20, step=1, doc="distinct words a segment needs to be compared")
    max_period: int = param(12, low=2, high=32, step=1, doc="longest cycle, in segments, the check finds")
    min_copies: int = param(5, low=2, high=12, step=1, doc="similar copies a run needs")
    region_chars: int = param(600, low=100, high=3000, step=50, doc="characters a run must cover")
    max_segment_chars: int = param(1000, low=200, high=4000, step=100, doc="a segment is cut here without a mark")
    action: str = action_param("warn")


def prose_tokens(text: str) -> frozenset[str]:
    """Lower-cased words, a Chinese run as its character bigrams; empty when
    the text is not prose (words under `PROSE_SHARE` of its visible
    characters, or a table's cell rule `|`: table rows, code, formulas).

    >>> sorted(prose_tokens("Check test_add_12 again, 3 times. 再检查"))
    ['again', 'check', 'test_add_0', 'times', '再检', '检查']
    >>> prose_tokens("| Disney+ | 2023-09-01 | $7.99 |")
    frozenset()
    """
    if "|" in text:
        return frozenset()
    if text.isascii():
        # Most text: its words are its runs of word characters, split in C
        # with no search for them (the search was half of a segment's cost).
        runs = text.encode().translate(ASCII_WORD_RUNS).decode()
        if "0" not in runs and "_" not in runs:
            # Prose with no digit and no underscore: every run is a word.
            if len(runs) - runs.count(" ") < PROSE_SHARE * (len(text) - text.count(" ")):
                return frozenset()
            return frozenset(runs.split())
        if "00" in runs:
            runs = ZERO_RUNS.sub("0", runs)  # a number is one "0", as `DIGITS.sub` makes it
        # A run holding a letter: its letters are lower-case, "0" and "_" uncased.
        words = list(filter(str.islower, runs.split()))
        if sum(map(len, words)) < PROSE_SHARE * (len(text) - text.count(" ")):
            return frozenset()
        return frozenset(words)
    words = WORD.findall(DIGITS.sub("0", text.lower()))
    if sum(map(len, words)) < PROSE_SHARE * (len(text) - text.count(" ")):
        return frozenset()
    if not CJK.search(text):
        return frozenset(words)
    found = set()
    for word in words:
        if CJK.match(word) and len(word) > 1:
            found.update(map(str.__add__, word, word[1:]))  # its bigrams, made in C
        else:
            found.add(word)
    return frozenset(found)


class _Channel:
    __slots__ = (
        "pending",
        "pending_len",
        "start",
        "extra",
        "ring",
        "token_sets",
        "older_sets",
        "tokens_of",
        "runs",
        "active",
        "in_code",
        "opened",
        "line_start",
    )

    def __init__(self, max_period: int) -> None:
        self.pending: list[str] = []
        self.pending_len = 0
        self.start = 0  # channel offset of the current segment
        # What the Chinese characters of the segments before it add to their
        # length (`HAN_CHAR_WEIGHT`): a run's region is its characters and the
        # difference of this between its ends.
        self.extra = 0
        # (start, extra, text) of the last compared segments, and their token
        # sets apart: a set operation takes them all as arguments, with no loop.
        self.ring: deque[tuple[int, int, str]] = deque(maxlen=max_period)
        self.token_sets: deque[frozenset[str]] = deque(maxlen=max_period)
        # The token sets of the `max_period` segments before those: with them,
        # two copies of the longest cycle, where a reworded loop's new words
        # are looked for.
        self.older_sets: deque[frozenset[str]] = deque(maxlen=max_period)
        # Segment text -> its tokens, for the segments seen lately: in a loop
        # most segments are said again word for word, and tokenising is most
        # of a segment's cost. Emptied when it holds max_period.
        self.tokens_of: dict[str, frozenset[str]] = {}
        # period -> (similar pairs in a row, pairs not identical, segments since
        # the last one bringing a new word, channel offset and extra where the run starts)
        self.runs: dict[int, tuple[int, int, int, int, int]] = {}
        self.active = 0  # period of the run already reported
        self.in_code = False  # inside a fenced code block ("```"), or in text that opens as code
        self.opened = False  # whether the segments read have said how the text opens (`raw_output.opening`)
        self.line_start = True  # whether the next segment starts a line (read until then)


class NearDuplicate(Detector):
    """Paraphrase loops on `reasoning` and `content` (action `warn`)."""

    name = "near_duplicate"
    Params = NearDuplicateParams
    builtin = {"default": {}}
    consumes = frozenset({"reasoning", "content", "turn", "finish"})
    wake_chars = SEGMENT_MARKS

    def __init__(self, params: NearDuplicateParams | None = None):
        super().__init__(params)
        self._channels = {channel: _Channel(self.params.max_period) for channel in TEXT_CHANNELS}

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        state = self._channels.get(kind)
        if state is None:
            if kind == "turn":
                for channel in TEXT_CHANNELS:
                    self._channels[channel] = _Channel(self.params.max_period)
                    self._channels[channel].start = ctx.offsets[channel]
            elif kind == "finish":
                return self._flush(ctx)
            return []
        text = event["text"]
        cap = self.params.max_segment_chars
        # The first mark, found once: the test for the common case and the first cut.
        match = SEGMENT_END.search(text)
        if match is None and state.pending_len + len(text) < cap:
            state.pending.append(text)
            state.pending_len += len(text)
            # Text without a segment mark is only buffered up to the segment's cut.
            self.quiet_room = cap - state.pending_len
            return []
        found = []
        offset = ctx.offsets[kind]
        i = 0
        while i < len(text):
            if i:
                match = SEGMENT_END.search(text, i)
            cut = match.end() if match else len(text) + 1
            if state.pending_len + cut - i > cap:
                cut = i + cap - state.pending_len
            if cut > len(text):
                break
            state.pending.append(text[i:cut])
            i = cut
            hit = self._end_segment(state, kind, offset + cut, ctx.turn)
            if hit is not None:
                found.append(hit)
        if i < len(text):
            state.pending.append(text[i:])
            state.pending_len += len(text) - i
        self.quiet_room = cap - state.pending_len
        return found

    def _flush(self, ctx: StreamContext) -> list[Detection]:
        found = []
        for channel, state in self._channels.items():
            if state.pending:
                hit = self._end_segment(state, channel, ctx.offsets[channel], ctx.turn)
                if hit is not None:
                    found.append(hit)
        return found

    def _end_segment(self, state: _Channel, channel: str, end: int, turn: int) -> Detection | None:
        params = self.params
        start, segment = state.start, "".join(state.pending)
        state.pending = []
        state.pending_len = 0
        state.start = end
        extra = state.extra
        if not segment.isascii():
            state.extra += (HAN_CHAR_WEIGHT - 1) * sum(map(len, HAN_CHARS.findall(segment)))
        if not state.opened:
            _read_opening(state, segment)
        if "`" in segment and segment.lstrip().startswith("```"):
            state.in_code = not state.in_code
            return None
        if state.in_code:
            return None  # code: similar methods and docstrings are no paraphrase
        # A token is at least one character: a shorter segment holds too few.
        if len(segment) < params.min_tokens:
            return None
        words = state.tokens_of.get(segment)
        if words is None:
            words = prose_tokens(segment)
            if len(state.tokens_of) >= params.max_period:
                state.tokens_of.clear()
            state.tokens_of[segment] = words
        size = len(words)
        if size < params.min_tokens:
            return None
        ring, token_sets, runs, threshold = state.ring, state.token_sets, state.runs, params.similarity
        unseen = words.difference(*token_sets)
        fresh = None
        grown: dict[int, tuple[int, int, int, int, int]] = {}
        # Jaccard is at most the share of this segment's words found in the
        # other: when the recent segments together hold too few, none is similar.
        if size - len(unseen) >= threshold * size:
            least = threshold * size
            for d, before in enumerate(reversed(token_sets), 1):
                other = len(before)
                # Jaccard is at most the ratio of the smaller set to the larger.
                if (other < least) if other < size else (size < threshold * other):
                    continue
                common = len(words & before)
                similarity = common / (size + other - common)
                if similarity >= threshold:
                    if fresh is None:
                        # A word none of the recent segments holds: a parallel
                        # list names a new subject in every item ("Leopon",
                        # "Jaglion"); a reworded loop soon only swaps in words it
                        # has used before, in this copy or one further back. A
                        # run fires once a whole copy brought no new word.
                        fresh = bool(unseen) and bool(unseen.difference(*state.older_sets))
                    run = runs.get(d)
                    pairs, changed, settled, run_start, run_extra = run if run else (0, 0, 0, *ring[-d][:2])
                    grown[d] = (
                        pairs + 1,
                        changed + (similarity < 1),
                        0 if fresh else settled + 1,
                        run_start,
                        run_extra,
                    )
        if len(token_sets) == params.max_period:
            state.older_sets.append(token_sets[0])
        ring.append((start, extra, segment))
        token_sets.append(words)
        state.runs = grown
        if state.active:
            if state.active in grown:
                return None  # the reported run goes on
            state.active = 0
        for d, (pairs, changed, settled, run_start, run_extra) in sorted(grown.items()):
            if (
                pairs >= d * (params.min_copies - 1)
                and changed
                and settled >= d
                and end - run_start + state.extra - run_extra >= params.region_chars
                and not _counts_in_words(grown, ring, run_start)
            ):
                state.active = d
                copies = pairs // d + 1
                unit = "".join(ring[-j][2] for j in range(d, 0, -1)).strip()
                return Detection(
                    detector=self.name,
                    type="near_duplicate",
                    channel=channel,
                    start=run_start,
                    end=end,
                    at=end,
                    unit=unit,
                    period=len(unit),
                    repeats=copies,
                    action=params.action,
                    message=f"the same {len(unit):,}-character passage ({d} sentences or lines), reworded,"
                    f" said {copies:,} times since offset {run_start:,}",
                    turn=turn,
                )
        return None


def _read_opening(state: _Channel, segment: str) -> None:
    """Whether the text opens as code, markup or data (then read as a code
    block), once a segment says so (`raw_output.opening`)."""
    stripped = segment.lstrip()
    if stripped:
        code = opening(stripped, state.line_start or "\n" in segment[: len(segment) - len(stripped)])
        if code is not None:
            state.opened = True
            state.in_code = state.in_code or code
    state.line_start = segment.endswith("\n")


def _counts_in_words(runs: dict[int, tuple[int, int, int, int, int]], ring, start: int) -> bool:
    """Whether the text since `start` is one copy said again in the same
    words with its numbers counting (a song's verse counting down its
    bottles, its two lines similar to each other): a run that started there
    or before has had a whole copy, every pair identical in its words, and
    its newest copy has other numbers than the one before. `text_loop`
    judges such a counter; any other period's similar segments are parts of
    that copy, no rewording."""
    return any(
        changed == 0 and pairs >= m and m < len(ring) and run_start <= start and ring[-1][2] != ring[-1 - m][2]
        for m, (pairs, changed, _, run_start, _) in runs.items()
    )
