"""The session page's conversation (pure, no Django): the items of
streams.py in order, each as the page shows it, and the detections grouped
by the loop they cover.

The DOM stays bounded as the channel panels' did: the page shows the first
`HEAD_ITEMS` items and `CONTEXT_ITEMS` around each of the first
`MAX_DETECTION_WINDOWS` detections, with gaps the page loads on demand
(`PAGE_ITEMS` at a time); inside an item, a long text or a long run of tool
calls is windowed the same way (panels.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .panels import (
    CONTEXT_CALLS,
    CONTEXT_CHARS,
    HEAD_CALLS,
    HEAD_CHARS,
    MAX_DETECTION_WINDOWS,
    PAGE_CALLS,
    PAGE_CHARS,
    blocks,
    channel_window,
    plan_ranges,
    tool_window,
)
from .streams import SessionStreams

HEAD_ITEMS = 60  # items shown from the start of the conversation
CONTEXT_ITEMS = 3  # items shown before a loop's first item and after the one where it was caught
PAGE_ITEMS = 200  # the most items one load adds
LONG_REASONING = 1200  # reasoning longer than this starts collapsed (unless a detection is in it)
ACTION_ORDER = ("warn", "nudge", "force_text", "stop")  # weakest to strongest


class ItemIndex:
    """Which item holds a channel offset or a tool-call index."""

    def __init__(self, streams: SessionStreams):
        self.starts: dict[str, list[int]] = {}
        self.indexes: dict[str, list[int]] = {}
        for index, item in enumerate(streams.items):
            if item.kind in ("reasoning", "content", "tools"):
                self.starts.setdefault(item.kind, []).append(item.start)
                self.indexes.setdefault(item.kind, []).append(index)

    def of(self, channel: str, offset: int) -> int | None:
        """The index of the item of `channel` holding `offset` (the last one
        for an offset at or past the channel's end; None: no such item)."""
        starts = self.starts.get(channel)
        if not starts:
            return None
        return self.indexes[channel][max(bisect_right(starts, offset) - 1, 0)]


def detection_items(detection: dict, index: ItemIndex) -> tuple[int, int] | None:
    """The items where a detection's loop began and where it was caught."""
    first = index.of(detection["channel"], detection["start"])
    if first is None:
        return None
    return first, max(first, index.of(detection["channel"], detection_last(detection)))


def detection_last(detection: dict) -> int:
    """The offset (tool-call index) where a detection was caught: the last call read, on `tools`."""
    return max(detection["at"] - 1, detection["start"]) if detection["channel"] == "tools" else detection["at"]


def conversation_blocks(
    item_count: int, detections: Sequence[dict], index: ItemIndex, windows: int = MAX_DETECTION_WINDOWS
) -> list[dict]:
    """The conversation of `item_count` items as first shown: ranges of
    items ({"gap": False, "start", "end"}) and gaps between them ({"gap":
    True, ...}), around the first `windows` detections. `index`: an
    `ItemIndex`, or anything with its `of`."""
    spans = [(span[0], span[1] + 1) for d in detections[:windows] if (span := detection_items(d, index))]
    ranges = plan_ranges(item_count, spans, head=HEAD_ITEMS, context=CONTEXT_ITEMS, page=PAGE_ITEMS)
    return blocks(item_count, ranges)


def item_views(streams: SessionStreams, detections: Sequence[dict], start: int, end: int) -> list[dict]:
    """Items [start, end) as the page's `_items.html` shows them."""
    views = []
    shown = streams.items_between(start, end)
    # The detections meeting these items at all, per channel: each item then looks through few.
    reach = {}
    for _, item in shown:
        low, high = reach.get(item.kind, (item.start, item.end))
        reach[item.kind] = (min(low, item.start), max(high, item.end))
    detections = [d for d in detections if d["channel"] in reach and _meets(d, *reach[d["channel"]])]
    for number, item in shown:
        view = {"index": number, "kind": item.kind, "turn": item.turn, "text": item.text}
        if item.kind in ("reasoning", "content"):
            mine = [d for d in detections if d["channel"] == item.kind and _meets(d, item.start, item.end)]
            view.update(
                channel=item.kind,
                start=item.start,
                length=item.end - item.start,
                blocks=_text_blocks(streams, item.kind, mine, item.start, item.end),
                open=item.kind == "content" or item.end - item.start <= LONG_REASONING or bool(mine),
            )
        elif item.kind == "tools":
            mine = [d for d in detections if d["channel"] == "tools" and _meets(d, item.start, item.end)]
            view.update(start=item.start, length=item.end - item.start)
            view["blocks"] = _tool_blocks(streams, mine, item.start, item.end)
        views.append(view)
    return views


def _meets(detection: dict, start: int, end: int) -> bool:
    return detection["start"] <= end and max(detection["end"], detection["at"]) >= start


def _shifted(length: int, spans: list[tuple[int, int]], base: int, **plan) -> list[dict]:
    ranges = plan_ranges(length, [(lo - base, hi - base) for lo, hi in spans], **plan)
    return [{**b, "start": b["start"] + base, "end": b["end"] + base} for b in blocks(length, ranges)]


def _text_blocks(streams: SessionStreams, channel: str, mine: list[dict], start: int, end: int) -> list[dict]:
    spans = [(max(d["start"], start), min(max(d["end"], d["at"]), end)) for d in mine[:MAX_DETECTION_WINDOWS]]
    shown = _shifted(end - start, spans, start, head=HEAD_CHARS, context=CONTEXT_CHARS, page=PAGE_CHARS)
    return [b if b["gap"] else channel_window(streams, channel, mine, b["start"], b["end"]) for b in shown]


def _tool_blocks(streams: SessionStreams, mine: list[dict], start: int, end: int) -> list[dict]:
    spans = [(max(d["start"], start), min(max(d["end"], d["at"]), end)) for d in mine[:MAX_DETECTION_WINDOWS]]
    shown = _shifted(end - start, spans, start, head=HEAD_CALLS, context=CONTEXT_CALLS, page=PAGE_CALLS)
    return [b if b["gap"] else tool_window(streams, mine, b["start"], b["end"]) for b in shown]


def detection_groups(detections: Sequence[dict]) -> list[dict]:
    """Detections that cover the same loop, as one group each: on a text
    channel or on the tool calls, detections whose regions ([start,
    max(end, at)), the span read until it fired) overlap; on the `session`
    channel, which has no positions, the detections of one detector. Each
    group: `ids` and `members` (firing order), `first` (its first to fire),
    `channel`, `start`, `end`, `at` (its earliest firing), `detectors`
    ([(detector, type, count)] in firing order), `action` (the strongest).
    Groups come in the order their first detection fired."""
    order = {d["id"]: n for n, d in enumerate(detections)}
    groups: list[list[dict]] = []
    by_detector: dict[str, list[dict]] = {}
    positioned = sorted(
        (d for d in detections if d["channel"] != "session"), key=lambda d: (d["channel"], d["start"], order[d["id"]])
    )
    reach: int | None = None
    for d in positioned:
        if groups and groups[-1][0]["channel"] == d["channel"] and reach is not None and d["start"] < reach:
            groups[-1].append(d)
            reach = max(reach, d["end"], d["at"])
        else:
            groups.append([d])
            reach = max(d["end"], d["at"], d["start"] + 1)
    for d in detections:
        if d["channel"] == "session":
            by_detector.setdefault(d["detector"], []).append(d)
    groups.extend(by_detector.values())
    out = []
    for members in groups:
        members.sort(key=lambda d: order[d["id"]])
        kinds: dict[tuple[str, str], int] = {}
        for d in members:
            kinds[(d["detector"], d["type"])] = kinds.get((d["detector"], d["type"]), 0) + 1
        first = members[0]
        out.append(
            {
                "ids": [d["id"] for d in members],
                "members": members,
                "first": first,
                "channel": first["channel"],
                "start": min(d["start"] for d in members),
                "end": max(d["end"] for d in members),
                "at": min(d["at"] for d in members),
                "detectors": [(detector, kind, count) for (detector, kind), count in kinds.items()],
                "action": max((d["action"] for d in members), key=_strength),
            }
        )
    out.sort(key=lambda g: order[g["ids"][0]])
    return out


def _strength(action: str) -> int:
    return ACTION_ORDER.index(action) if action in ACTION_ORDER else len(ACTION_ORDER)
