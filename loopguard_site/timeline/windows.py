"""The session page of a long session, from its stored layout
(transcripts.layout_rows): the page, its conversation windows and its
timeline read a bounded number of rows whatever the session's length.

- The conversation: the head and the window of the first detection (a
  session laid out whole opens the windows of its first 20), each block
  laid out from the events of its items alone (`window_streams`); gaps load
  the same way.
- Where a detection or checkpoint is (its items, its x): one query for all
  of them (`Places`).
- The timeline: the items counted in at most `MAX_POINTS` bins (for the
  whole session, from the counts kept with the layout; for a zoom, from
  the items of that stretch), plus every detection and checkpoint exactly
  (charts.summary_figure).
Cost: a few queries per block shown, two for the places, one per figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopguard_site.transcripts.layout import LayoutState, summary_bins
from loopguard_site.transcripts.layout_rows import Place, Point, layout_bins, layout_items, layout_points
from loopguard_site.transcripts.models import Event
from loopguard_site.transcripts.selectors import session_event_stream

from .charts import MAX_POINTS, POSITIONED_CHANNELS, summary_figure
from .conversation import detection_last, item_views
from .page import page_parts, zoom_answer
from .panels import window_of
from .streams import SessionStreams, ToolCall, window_from_events

# The conversation opens around the first detection alone (and the head):
# another's window loads when it is clicked or the address names it.
DETECTION_WINDOWS = 1
# Events read past a window for the results of its calls still waiting.
RESULT_REACH = 2_000
RESULT_CHUNK = 50


class Places:
    """Where channel offsets, tool calls and events of a long session are:
    the stored item holding each point asked for, found in one go."""

    def __init__(self, session_id: int, points: Sequence[Point]):
        unique = list(dict.fromkeys(points))
        self.items: dict[Point, Place | None] = dict(zip(unique, layout_points(session_id, unique), strict=True))

    def of(self, channel: str, offset: int) -> int | None:
        """The index of the item of `channel` holding `offset` (as `ItemIndex.of`)."""
        item = self.items.get(Point(channel, offset))
        return None if item is None else item.index

    def x(self, axis: str):
        """(channel, offset, after=False) -> x on `axis`, as `SessionStreams.position` / `time`."""

        def place(channel: str, offset: int, after: bool = False) -> float:
            item = self.items.get(Point(channel, offset, after))
            if item is None:
                return 0.0
            if axis == "time":
                return item.t or 0.0
            return item.position + min(max(offset - item.start, 0), item.size)

        return place

    def event_x(self, axis: str):
        """seq -> x on `axis` of the item holding that event (its start)."""

        def place(seq: int) -> float | None:
            item = self.items.get(Point("seq", seq))
            if item is None:
                return None
            return item.position if axis == "offset" else item.t

        return place


def result_points(detections: Sequence[dict], checkpoints: Sequence[dict]) -> list[Point]:
    """The points the page places: each detection's start, end and firing
    point (and the item it was caught in), each checkpoint's range and checkpoint."""
    points = []
    for d in detections:
        channel = d["channel"]
        if channel in POSITIONED_CHANNELS:
            points += [
                Point(channel, d["start"]), Point(channel, d["end"], True), Point(channel, d["at"], True),
                Point(channel, max(d["end"], d["at"]), True), Point(channel, detection_last(d)),
            ]  # fmt: skip
        else:
            points.append(Point("seq", d["event_seq"]))
    for c in checkpoints:
        points += [Point(c["channel"], c["start"]), Point(c["channel"], c["end"], True)]
        points.append(Point(c["channel"], c["checkpoint"], True))
    return points


def window_streams(session_id: int, state: LayoutState, start: int, end: int) -> SessionStreams | None:
    """Items [start, end) of the session laid out from their events alone
    (None: no such items)."""
    items = layout_items(session_id, start, end + 1)  # and the next one: where the events stop
    if not items or items[0].index != start:
        return None
    after = items.pop() if len(items) > end - start else None
    last = after.seq - 1 if after is not None else None
    events = session_event_stream(session_id, after=items[0].seq - 1, last=last)
    streams = window_from_events(events, items, state)
    if last is not None:
        later_results_give(session_id, streams.tool_calls, after=last, session_end=state.seq)
    return streams


def later_results_give(session_id: int, calls: Sequence[ToolCall], *, after: int, session_end: int) -> None:
    """Give the window's calls still waiting the results that arrive after
    its events (a call, then text, then its result: the result falls in a
    later item), as laying the session out whole does: a result goes to the
    last call with its id. Only the next `RESULT_REACH` events are read (by
    the type column: the page stays bounded); a call whose result is not
    among them says how far it was looked for rather than "no result"."""
    waiting = {call.call_id: call for call in calls}  # the last call of each id, as the layout's pending calls
    waiting = {call_id: call for call_id, call in waiting.items() if call.ok is None}
    if not waiting:
        return
    seq, last = after, min(after + RESULT_REACH, session_end)
    while waiting and seq < last:  # in small chunks: the result is most often a few events on
        rows = list(
            Event.objects.filter(
                session_id=session_id, seq__gt=seq, seq__lte=last, type__in=("tool_call", "tool_result")
            )
            .order_by("seq")
            .values_list("seq", "data")[:RESULT_CHUNK]
        )
        for _, event in rows:
            call_id = event.get("id")
            if event["type"] == "tool_call":
                waiting.pop(call_id, None)  # a later call with this id takes its result
            elif (call := waiting.pop(call_id, None)) is not None:
                call.result_take(event)
        if len(rows) < RESULT_CHUNK:
            break
        seq = rows[-1][0]
    if last < session_end:  # not looked for to the end: say how far
        for call in waiting.values():
            call.result_reach = RESULT_REACH


class LaidOutSession:
    """The session page's reads of a long session, from its stored layout
    (the same questions `sources.WholeSession` answers for a short one)."""

    def __init__(self, session_id: int, state: LayoutState):
        self.session_id = session_id
        self.state = state

    def page_parts(self, detections: Sequence[dict], checkpoints: Sequence[dict]) -> dict:
        """`page.session_page_parts` of a long session."""
        places = Places(self.session_id, result_points(detections, checkpoints))
        figures = {"offset": self._figure(detections, checkpoints, places, axis="offset")}
        if self.state.has_time:
            figures["time"] = self._figure(detections, checkpoints, places, axis="time")
        return page_parts(
            figures=figures,
            index=places,
            item_count=self.state.items,
            items_of=lambda start, end: self.items(detections, start, end)[2],
            detections=detections,
            checkpoints=checkpoints,
            detection_windows=DETECTION_WINDOWS,
        )

    def item_of(self, channel: str, offset: int) -> int | None:
        """The index of the item of `channel` holding `offset`."""
        return Places(self.session_id, [Point(channel, offset)]).of(channel, offset)

    def items(self, detections: Sequence[dict], start: int, end: int) -> tuple[int, int, list[dict]]:
        """Items [start, end) (clamped to the conversation) as the page shows them."""
        start = min(start, self.state.items)
        end = max(start, min(end, self.state.items))
        streams = window_streams(self.session_id, self.state, start, end) if end > start else None
        return start, end, [] if streams is None else item_views(streams, detections, start, end)

    def window(self, channel: str, detections: Sequence[dict], start: int, end: int) -> dict:
        """[start, end) of a channel (`panels.window_of`),
        from the events of the items that hold it."""
        first, last = layout_points(self.session_id, [Point(channel, start), Point(channel, end, True)])
        if first is None or last is None:
            empty = {"rows": []} if channel == "tools" else {"items": []}
            return {"gap": False, "start": start, "end": start, **empty}
        streams = window_streams(self.session_id, self.state, first.index, last.index + 1)
        return window_of(streams, channel, detections, start, end)

    def zoom(
        self, detections: Sequence[dict], checkpoints: Sequence[dict], *, axis: str, x_range: tuple[float, float]
    ) -> dict:
        """The timeline of [x_range] on `axis`, and where its detections are."""
        places = Places(self.session_id, result_points(detections, checkpoints))
        figure = self._figure(detections, checkpoints, places, axis=axis, x_range=x_range)
        return zoom_answer(figure, detections, places)

    def _figure(
        self,
        detections: Sequence[dict],
        checkpoints: Sequence[dict],
        places: Places,
        *,
        axis: str,
        x_range: tuple[float, float] | None = None,
    ) -> dict:
        state = self.state
        whole = (0, (state.position if axis == "offset" else state.t or 0) or 1)
        if x_range is None:  # the whole session: the counts kept with the layout
            bins = summary_bins(state, MAX_POINTS, axis)
        else:  # a zoom: the items of that stretch
            bins = layout_bins(self.session_id, axis=axis, low=x_range[0], high=x_range[1], bins=MAX_POINTS)
        return summary_figure(
            bins, detections, checkpoints, x=places.x(axis), event_x=places.event_x(axis), axis=axis, whole=whole,
            x_range=x_range,
        )  # fmt: skip
