"""Windows of a session's text and tool calls (pure, no Django): the ranges
to show (the head and around each detection), the gaps between them that
the page loads on demand one page at a time, and a window's highlights or
tool rows; conversation.py applies them to each item of the conversation.

The DOM stays bounded whatever the session's size: at most
`MAX_DETECTION_WINDOWS` detections open windows at first (the others open
theirs when clicked), a window holds at most `PAGE_CHARS` characters (a
longer region shows its onset and its end, with a gap between) and the tool
list the same in calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from .highlights import highlight_items
from .streams import SessionStreams, ToolCall

HEAD_CHARS = 3000  # text shown from the start of each channel
CONTEXT_CHARS = 300  # text shown before a loop's onset and after the point it was caught
PAGE_CHARS = 8000  # the most text one window, or one load, holds
HEAD_CALLS = 50
CONTEXT_CALLS = 2
PAGE_CALLS = 100
MAX_DETECTION_WINDOWS = 20
ARGS_CHARS = 300  # tool arguments shown in the list


def plan_ranges(
    length: int, spans: Sequence[tuple[int, int]], *, head: int, context: int, page: int
) -> list[tuple[int, int]]:
    """Sorted, disjoint [start, end) ranges of [0, length) to show: the head,
    and around each span [first, last] (its onset and where it was caught),
    one window if it fits a page, else a window at each end."""
    ranges = [(0, min(head, length))]
    for first, last in spans:
        lo, hi = first - context, last + context
        if hi - lo <= page:
            ranges.append((lo, hi))
        else:
            ranges += [(lo, lo + page // 2), (hi - page // 2, hi)]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted((max(lo, 0), min(hi, length)) for lo, hi in ranges):
        if hi <= lo:
            continue
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def blocks(length: int, ranges: list[tuple[int, int]]) -> list[dict]:
    """[0, length) as shown windows and the gaps between them, in order."""
    out: list[dict] = []
    position = 0
    for lo, hi in ranges:
        if lo > position:
            out.append({"gap": True, "start": position, "end": lo})
        out.append({"gap": False, "start": lo, "end": hi})
        position = hi
    if position < length:
        out.append({"gap": True, "start": position, "end": length})
    return out


def text_window(
    text: str, detections: Sequence[dict], start: int, end: int, *, base: int = 0, channel_end: int | None = None
) -> dict:
    """One window of a channel's text with its highlights (see highlights.py);
    `text` starts at channel offset `base` and the channel ends at
    `channel_end` (None: where `text` does)."""
    stop = base + len(text)
    start = max(base, min(start, stop))
    end = max(start, min(end, stop, start + PAGE_CHARS))
    chunk = text[start - base : end - base]
    meeting = [d for d in detections if d["start"] <= end and max(d["end"], d["at"]) >= start]
    items = highlight_items(chunk, start, meeting, at_channel_end=end == (stop if channel_end is None else channel_end))
    return {"gap": False, "start": start, "end": end, "items": items}


def channel_window(streams: SessionStreams, channel: str, detections: Sequence[dict], start: int, end: int) -> dict:
    """`text_window` of a channel of `streams` (a whole session's or a window's)."""
    base, channel_end = streams.text_bases[channel], streams.channel_ends[channel]
    return text_window(streams.texts[channel], detections, start, end, base=base, channel_end=channel_end)


def tool_row(call: ToolCall, detections: Sequence[dict]) -> dict:
    return {
        "index": call.index,
        "name": call.name,
        "args": call.args if len(call.args) <= ARGS_CHARS else call.args[:ARGS_CHARS] + "…",
        "ok": call.ok,
        "result_reach": call.result_reach,
        "output": call.output,
        "turn": call.turn,
        "repeat_of": call.repeat_of,
        "occurrence": call.occurrence,
        "detections": [d["id"] for d in detections if d["start"] <= call.index < d["end"]],
        # `at` counts the calls read when it fired: the last of them is call at - 1.
        "fired": [{"id": d["id"], "detector": d["detector"]} for d in detections if max(d["at"] - 1, 0) == call.index],
    }


def tool_window(streams: SessionStreams, detections: Sequence[dict], start: int, end: int) -> dict:
    """Tool calls [start, end) of `streams` (a whole session's or a window's) as rows."""
    calls, base = streams.tool_calls, streams.call_base
    start = max(base, min(start, base + len(calls)))
    end = max(start, min(end, base + len(calls), start + PAGE_CALLS))
    meeting = [d for d in detections if d["start"] < end and max(d["end"], d["at"]) >= start]
    rows = [tool_row(c, meeting) for c in calls[start - base : end - base]]
    return {"gap": False, "start": start, "end": end, "rows": rows}


def window_of(streams: SessionStreams, channel: str, detections: Sequence[dict], start: int, end: int) -> dict:
    """[start, end) of `channel` (`tools`: tool-call indices) as the page's window shows it."""
    if channel == "tools":
        return tool_window(streams, detections, start, end)
    return channel_window(streams, channel, detections, start, end)
