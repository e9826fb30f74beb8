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
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from detector import TEXT_CHANNELS

OUTPUT_CHARS = 2000  # a tool result's output kept for the conversation


@dataclass(slots=True)
class Item:
    """One piece of the conversation, in stream order: a `turn` (its
    number in `turn`), a `user` message or how a request finished
    (`finish`: the reason), both in `text`; or a run of `reasoning` or
    `content` text, channel offsets [start, end), or of `tools`, call
    indices [start, end), uninterrupted by anything but tool results."""

    kind: str
    turn: int
    start: int = 0
    end: int = 0
    text: str = ""


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
    items: list[Item] = field(default_factory=list)
    _run_starts: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._run_starts = {channel: [run.start for run in runs] for channel, runs in self.runs.items()}

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
    parts: dict[str, list[str]] = {channel: [] for channel in TEXT_CHANNELS}
    offsets = dict.fromkeys(TEXT_CHANNELS, 0)
    runs: dict[str, list[TextRun]] = {channel: [] for channel in TEXT_CHANNELS}
    tool_calls: list[ToolCall] = []
    first_call: dict[str, ToolCall] = {}
    seen: dict[str, int] = {}  # calls so far per name and arguments
    pending: dict[str | None, ToolCall] = {}  # calls waiting for their result, by id
    turns: list[Turn] = []
    items: list[Item] = []
    positions: list[int] = []
    times: list[float | None] = []
    position, t, has_time = 0, None, False
    for seq, event in events:
        if event.get("t") is not None:
            t, has_time = float(event["t"]), True
        positions.append(position)
        times.append(t)
        kind = event["type"]
        if kind in TEXT_CHANNELS:
            text = event["text"]
            if text:
                start = offsets[kind]
                runs[kind].append(TextRun(kind, start, start + len(text), position, seq, t))
                _extend(items, kind, len(turns), start, start + len(text))
                parts[kind].append(text)
                offsets[kind] += len(text)
                position += len(text)
        elif kind == "turn":
            turns.append(Turn(len(turns) + 1, seq, position, t))
            items.append(Item("turn", len(turns)))
        elif kind in ("user", "finish"):
            items.append(Item(kind, len(turns), text=str(event.get("text" if kind == "user" else "reason") or "")))
        elif kind == "tool_call":
            args = json.dumps(event.get("args", {}), sort_keys=True, ensure_ascii=False)
            call = ToolCall(len(tool_calls), seq, event["name"], args, position, t, len(turns), event.get("id"))
            signature = f"{call.name}\x00{call.args}"
            first = first_call.setdefault(signature, call)
            if first is not call:
                call.repeat_of = first.index
            seen[signature] = call.occurrence = seen.get(signature, 0) + 1
            tool_calls.append(call)
            _extend(items, "tools", len(turns), call.index, call.index + 1)
            pending[call.call_id] = call
            position += 1
        elif kind == "tool_result":
            call = pending.pop(event.get("id"), None) or (tool_calls[-1] if tool_calls else None)
            if call is not None and call.ok is None:
                call.ok = bool(event.get("ok", True))
                call.output = str(event.get("output", ""))[:OUTPUT_CHARS]
    return SessionStreams(
        texts={channel: "".join(chunks) for channel, chunks in parts.items()},
        runs=runs,
        tool_calls=tool_calls,
        turns=turns,
        length=position,
        has_time=has_time,
        end_t=t,
        event_positions=positions,
        event_times=times,
        items=items,
    )


def _extend(items: list[Item], kind: str, turn: int, start: int, end: int) -> None:
    """Add [start, end) of `kind` to the last item if it is a run of the same kind, else start a new run."""
    if items and items[-1].kind == kind and items[-1].end == start:
        items[-1].end = end
    else:
        items.append(Item(kind, turn, start, end))
