"""A session's event stream laid out for the session page (pure, no Django).

`streams_from_events` reads the events once, in seq order, and keeps what
the page needs: each text channel's text, the runs of text each event added
(channel offsets, the stream position and `t`), tool calls with their
results and repeat marks, and turns. The *stream position* of a point is the
number of text characters (all text channels) streamed before it, plus one
per tool call before it: one x axis for every lane, on which an agent's
calls stand apart even when it writes no text between them. It also keeps
the conversation's items in order (`items`): turns, user messages, runs of
one channel's text, runs of tool calls, and how each request finished.
Memory: the text plus one small record per text event, tool call, turn and
item; tool outputs are cut to `OUTPUT_CHARS`.

The items are transcripts.layout's; so is a *window*: the events of a range
of items, laid out from the first item's stored starting point
(`window_from_events`), for a session too long to lay out whole per request.
A window's texts, tool calls and items start at `text_bases`, `call_base`
and `item_base`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from detector import TEXT_CHANNELS
from loopguard_site.transcripts.layout import LayoutBuilder, LayoutItem, LayoutState, canonical_args

OUTPUT_CHARS = 2000  # a tool result's output kept for the conversation


@dataclass(frozen=True, slots=True)
class TextRun:
    """The text one event added to a channel: offsets [start, end)."""

    channel: str
    start: int
    end: int
    position: int  # stream position of `start`
    seq: int
    t: float | None


@dataclass(slots=True)
class ToolCall:
    index: int
    seq: int
    name: str
    args: str  # canonical JSON of the arguments
    position: int
    t: float | None
    turn: int
    call_id: str | None = None
    ok: bool | None = None  # None: no result seen
    output: str = ""
    repeat_of: int | None = None  # index of the first call with the same name and arguments
    occurrence: int = 1  # how many calls with this name and arguments so far, this one included
    result_reach: int | None = None  # a window's call: its result looked for this many events past the window

    def result_take(self, event: dict) -> None:
        """Its `tool_result` event: ok or failed, the output cut to `OUTPUT_CHARS`."""
        self.ok, self.output = bool(event.get("ok", True)), str(event.get("output", ""))[:OUTPUT_CHARS]


@dataclass(frozen=True, slots=True)
class Turn:
    number: int
    seq: int
    position: int
    t: float | None


@dataclass
class SessionStreams:
    texts: dict[str, str]
    runs: dict[str, list[TextRun]]
    tool_calls: list[ToolCall]
    turns: list[Turn]
    length: int  # stream position at the end
    has_time: bool  # some event carried `t`
    end_t: float | None
    # Per event (index seq - 1): its stream position and its `t` (carried forward).
    event_positions: list[int] = field(default_factory=list)
    event_times: list[float | None] = field(default_factory=list)
    items: list[LayoutItem] = field(default_factory=list)
    item_base: int = 0
    call_base: int = 0
    text_bases: dict[str, int] = field(default_factory=dict)
    channel_ends: dict[str, int] = field(default_factory=dict)  # each channel's whole length
    _run_starts: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._run_starts = {channel: [run.start for run in runs] for channel, runs in self.runs.items()}
        for channel, text in self.texts.items():
            self.text_bases.setdefault(channel, 0)
            self.channel_ends.setdefault(channel, self.text_bases[channel] + len(text))

    def items_between(self, start: int, end: int) -> list[tuple[int, LayoutItem]]:
        """(index, item) of the items [start, end) this holds."""
        base = self.item_base
        return list(enumerate(self.items[max(start - base, 0) : max(end - base, 0)], start=max(start, base)))

    def _run_at(self, channel: str, offset: int, after: bool) -> TextRun | None:
        runs = self.runs.get(channel)
        if not runs:
            return None
        starts = self._run_starts[channel]
        index = bisect_left(starts, offset) - 1 if after else bisect_right(starts, offset) - 1
        return runs[max(index, 0)]

    def position(self, channel: str, offset: int, after: bool = False) -> int:
        """Stream position of a channel offset (a tool-call index on `tools`).
        An offset is a point between characters; where a run of the channel
        ends and the next begins, that point is two places on the stream:
        the next run's start, or with `after` (for "read up to here", like
        `end` and `at`) the previous run's end."""
        if channel == "tools":
            return self._call_position(offset - 1) + 1 if after and offset > 0 else self._call_position(offset)
        run = self._run_at(channel, offset, after)
        if run is None:
            return 0
        return run.position + min(max(offset - run.start, 0), run.end - run.start)

    def _call_position(self, index: int) -> int:
        return self.tool_calls[index].position if 0 <= index < len(self.tool_calls) else self.length

    def time(self, channel: str, offset: int, after: bool = False) -> float | None:
        """`t` of the event that streamed a channel offset (a tool-call index
        on `tools`); `after` as for `position`."""
        if channel == "tools":
            index = offset - 1 if after and offset > 0 else offset
            return self.tool_calls[index].t if 0 <= index < len(self.tool_calls) else self.end_t
        run = self._run_at(channel, offset, after)
        if run is None:
            return None
        return self.end_t if offset > run.end or (offset == run.end and not after) else run.t

    def event_position(self, seq: int) -> int:
        return self.event_positions[seq - 1] if 0 < seq <= len(self.event_positions) else self.length

    def event_time(self, seq: int) -> float | None:
        return self.event_times[seq - 1] if 0 < seq <= len(self.event_times) else self.end_t


def streams_from_events(events: Iterable[tuple[int, dict]]) -> SessionStreams:
    """Lay out `(seq, event)` pairs given in seq order (events as
    event-format.md defines them, already validated when stored)."""
    return _laid_out(events, LayoutBuilder())


def window_from_events(
    events: Iterable[tuple[int, dict]], items: Sequence[LayoutItem], state: LayoutState
) -> SessionStreams:
    """The window of `items` (consecutive stored items) from their events
    (every event from the first item's seq up to the next item's, in seq
    order): laid out from where the first item starts, with the stored
    items (their repeat marks count every call before the window) and
    `state`, the whole layout's, for the channels' lengths."""
    first = items[0]
    start = LayoutState(
        seq=first.seq - 1, position=first.position, reasoning=first.reasoning, content=first.content,
        calls=first.calls, turns=first.turn - (first.kind == "turn"), items=first.index, t=first.t,
    )  # fmt: skip
    streams = _laid_out(events, LayoutBuilder(start))
    streams.items = list(items)
    marks = [mark for item in items for mark in item.marks]
    for call, (repeat_of, occurrence) in zip(streams.tool_calls, marks, strict=False):
        call.repeat_of, call.occurrence = repeat_of, occurrence
    streams.item_base, streams.call_base = first.index, first.calls
    streams.text_bases = {channel: getattr(first, channel) for channel in TEXT_CHANNELS}
    streams.channel_ends = {channel: getattr(state, channel) for channel in TEXT_CHANNELS}
    streams.length, streams.has_time = state.position, state.has_time
    return streams


def _laid_out(events: Iterable[tuple[int, dict]], builder: LayoutBuilder) -> SessionStreams:
    layout = builder.state
    parts: dict[str, list[str]] = {channel: [] for channel in TEXT_CHANNELS}
    runs: dict[str, list[TextRun]] = {channel: [] for channel in TEXT_CHANNELS}
    tool_calls: list[ToolCall] = []
    pending: dict[str | None, ToolCall] = {}  # calls waiting for their result, by id
    turns: list[Turn] = []
    positions: list[int] = []
    times: list[float | None] = []
    for seq, event in events:
        kind = event["type"]
        position, calls = layout.position, layout.calls
        offset = getattr(layout, kind) if kind in TEXT_CHANNELS else 0
        builder.feed(seq, event)
        t = layout.t
        positions.append(position)
        times.append(t)
        if kind in TEXT_CHANNELS:
            text = event["text"]
            if text:
                runs[kind].append(TextRun(kind, offset, offset + len(text), position, seq, t))
                parts[kind].append(text)
        elif kind == "turn":
            turns.append(Turn(layout.turns, seq, position, t))
        elif kind == "tool_call":
            repeat_of, occurrence = builder.items[-1].marks[-1]
            args = canonical_args(event.get("args", {}))
            call = ToolCall(calls, seq, event["name"], args, position, t, layout.turns, event.get("id"))
            call.repeat_of, call.occurrence = repeat_of, occurrence
            tool_calls.append(call)
            pending[call.call_id] = call
        elif kind == "tool_result":
            call = pending.pop(event.get("id"), None) or (tool_calls[-1] if tool_calls else None)
            if call is not None and call.ok is None:
                call.result_take(event)
    return SessionStreams(
        texts={channel: "".join(chunks) for channel, chunks in parts.items()},
        runs=runs,
        tool_calls=tool_calls,
        turns=turns,
        length=layout.position,
        has_time=layout.has_time,
        end_t=layout.t,
        event_positions=positions,
        event_times=times,
        items=builder.items,
    )
