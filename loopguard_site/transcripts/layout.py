"""A session's conversation layout, built event by event (pure, no Django).

The conversation's items, in stream order: turns, user messages, runs of
one text channel's text (channel offsets [start, end)), runs of tool calls
(call indices [start, end)) uninterrupted by anything but tool results, and
how each request finished. Each item also records where it starts: its
first event's seq, the stream position (text characters of every channel
plus one per tool call streamed before it), each channel's offset and the
tool calls before it, and `t` carried forward: from there the events of
any range of items can be laid out again without reading the ones before.
Tool calls get their repeat marks (the first call with the same name and
arguments, and how many so far).

`LayoutBuilder.feed` is incremental: a stored layout is extended by the
events appended after it (live ingest) from `LayoutState` alone. Cost O(1)
per event; memory: the items plus one signature a distinct tool call.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from detector import TEXT_CHANNELS


@dataclass(slots=True)
class LayoutItem:
    """One item of the conversation (see the module's docstring). `text`:
    a user message or a finish reason. `marks` (tool runs): per call,
    [index of the first call with its name and arguments or None, its
    occurrence]; `repeated` counts the calls that repeat an earlier one.
    `t_end`: `t` carried forward to its last event."""

    index: int
    seq: int
    kind: str
    turn: int
    start: int
    end: int
    position: int
    reasoning: int
    content: int
    calls: int
    t: float | None
    t_end: float | None
    text: str = ""
    marks: list[list] = field(default_factory=list)
    repeated: int = 0

    @property
    def size(self) -> int:
        """Stream positions the item spans (characters or tool calls)."""
        return self.end - self.start


@dataclass(slots=True)
class LayoutState:
    """Where a layout stands after its last event: what extending it needs."""

    seq: int = 0  # the last event laid out
    position: int = 0
    reasoning: int = 0
    content: int = 0
    calls: int = 0
    turns: int = 0
    items: int = 0
    t: float | None = None
    has_time: bool = False
    signatures: dict[str, list[int]] = field(default_factory=dict)  # signature -> [first call, calls so far]
    # The items counted per kind in blocks of `block_width` stream positions (by where each starts):
    # kind -> {block: [items, size, repeated, first start, first turn, x0, x1, t0, t1]}.
    block_width: int = 1
    blocks: dict[str, dict[str, list]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> LayoutState:
        return cls(**data)


MAX_BLOCKS = 800  # blocks the stream spans at most: past it, blocks twice as wide


def merge_blocks(a: list, b: list) -> list:
    """Two blocks' counts as one."""
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2], min(a[3], b[3]), min(a[4], b[4]), min(a[5], b[5]),
            max(a[6], b[6]), min(a[7], b[7]), max(a[8], b[8])]  # fmt: skip


def summary_bins(state: LayoutState, bins: int, axis: str) -> list[dict]:
    """The layout's blocks merged into at most `bins` bins of equal width
    (whole blocks), as `layout_rows.layout_bins` gives them: x on `axis`
    (`offset`: stream positions; `time`: `t`, from each bin's first item's
    start to its last item's end)."""
    span = state.position // state.block_width + 1
    per_bin = -(-span // bins)  # blocks a bin, rounded up
    rows = []
    for kind in sorted(state.blocks):
        merged: dict[int, list] = {}
        for key, block in state.blocks[kind].items():
            into = merged.get(int(key) // per_bin)
            merged[int(key) // per_bin] = block if into is None else merge_blocks(into, block)
        for number in sorted(merged):
            items, size, repeated, first, turn, x0, x1, t0, t1 = merged[number]
            x0, x1 = (x0, x1) if axis == "offset" else (t0, t1)
            row = {"kind": kind, "bin": number, "items": items, "size": size, "repeated": repeated, "first": first,
                   "turn": turn, "x0": x0, "x1": x1}  # fmt: skip
            rows.append(row)
    return rows


def call_signature(name: str, args: str) -> str:
    """A short fixed-size key of a call's name and canonical arguments."""
    return hashlib.blake2b(f"{name}\x00{args}".encode(), digest_size=12).hexdigest()


def canonical_args(args) -> str:
    """A tool call's arguments as canonical JSON (keys sorted)."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


class LayoutBuilder:
    """Feeds events in seq order onto a layout: `items` holds the items it
    opened or extended (the last one of the state it started from, when
    given as `last`, first)."""

    def __init__(self, state: LayoutState | None = None, last: LayoutItem | None = None):
        self.state = state or LayoutState()
        self.items: list[LayoutItem] = [last] if last is not None else []
        # The item last counted in its block, as it was then (`last` was counted when stored).
        self._counted = last
        self._counted_size = last.size if last is not None else 0
        self._counted_repeated = last.repeated if last is not None else 0

    def feed(self, seq: int, event: dict) -> None:
        s = self.state
        s.seq = seq
        if event.get("t") is not None:
            s.t, s.has_time = float(event["t"]), True
        kind = event["type"]
        if kind in TEXT_CHANNELS:
            text = event["text"]
            if text:
                start = getattr(s, kind)
                self._extend(seq, kind, start, start + len(text))
                setattr(s, kind, start + len(text))
                s.position += len(text)
        elif kind == "turn":
            s.turns += 1
            self._open(seq, "turn")
        elif kind in ("user", "finish"):
            self._open(seq, kind, text=str(event.get("text" if kind == "user" else "reason") or ""))
        elif kind == "tool_call":
            signature = call_signature(event["name"], canonical_args(event.get("args", {})))
            first, count = s.signatures.get(signature, (s.calls, 0))
            s.signatures[signature] = [first, count + 1]
            item = self._extend(seq, "tools", s.calls, s.calls + 1)
            repeat_of = first if first != s.calls else None
            item.marks.append([repeat_of, count + 1])
            item.repeated += repeat_of is not None
            s.calls += 1
            s.position += 1
        if self.items:
            self.items[-1].t_end = s.t
            self._count(self.items[-1])

    def _count(self, item: LayoutItem) -> None:
        """Count the last event's change to `item` in its block: a new item, or one grown."""
        s = self.state
        blocks = s.blocks.setdefault(item.kind, {})
        key = str(item.position // s.block_width)
        t0, t1 = item.t or 0.0, item.t_end or 0.0
        block = blocks.get(key)
        if block is None:
            blocks[key] = [1, item.size, item.repeated, item.start, item.turn, item.position, item.position + item.size,
                           t0, t1]  # fmt: skip
        elif self._counted is not item:
            block[0] += 1
            block[1] += item.size
            block[2] += item.repeated
            block[3], block[4] = min(block[3], item.start), min(block[4], item.turn)
            block[5], block[6] = min(block[5], item.position), max(block[6], item.position + item.size)
            block[7], block[8] = min(block[7], t0), max(block[8], t1)
        else:  # grown since counted: by one event
            block[1] += item.size - self._counted_size
            block[2] += item.repeated - self._counted_repeated
            block[6], block[8] = max(block[6], item.position + item.size), max(block[8], t1)
        self._counted, self._counted_size, self._counted_repeated = item, item.size, item.repeated
        if s.position // s.block_width >= MAX_BLOCKS:
            self._coarsen()

    def _coarsen(self) -> None:
        """Blocks twice as wide, each pair merged."""
        s = self.state
        s.block_width *= 2
        for kind, blocks in s.blocks.items():
            merged: dict[str, list] = {}
            for key, block in sorted(blocks.items(), key=lambda pair: int(pair[0])):
                into = merged.get(str(int(key) // 2))
                merged[str(int(key) // 2)] = block if into is None else merge_blocks(into, block)
            s.blocks[kind] = merged

    def _open(self, seq: int, kind: str, start: int = 0, end: int = 0, text: str = "") -> LayoutItem:
        s = self.state
        item = LayoutItem(
            s.items, seq, kind, s.turns, start, end, s.position, s.reasoning, s.content, s.calls, s.t, s.t, text
        )
        s.items += 1
        self.items.append(item)
        return item

    def _extend(self, seq: int, kind: str, start: int, end: int) -> LayoutItem:
        """Add [start, end) of `kind` to the last item if it is a run of the same kind, else open a new run."""
        last = self.items[-1] if self.items else None
        if last is not None and last.kind == kind and last.end == start and last.index == self.state.items - 1:
            last.end = end
            return last
        return self._open(seq, kind, start, end)
