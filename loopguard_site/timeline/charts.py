"""The session timeline as a Plotly figure (pure: data in, figure dict out).

Lanes, top to bottom: one per text channel, `tools`, `turns`, one per
checkpoint-style detector (its evaluations: the range it looked at as a
bar, the checkpoint as a marker, red when it found a loop) and one per
detector that fired (the repeated region as a bar, a marker where it
fired). The x axis is the stream position (characters of all text channels
and tool calls streamed before a point; see streams.py) or, when the
events carry `t`, seconds. Every trace holds at most `max_points` points:
beyond that, neighbours on the x axis are bucketed into one point whose
hover counts them; a zoom (`x_range`) is a figure of that stretch alone,
so it shows it in full detail again. Cost: O(n log n) in the session's
tool calls, turns, checkpoints and detections; hover text is built only
for the points kept. Hover text is Plotly's HTML-ish markup, so every piece of transcript
or detector text in it is escaped here; clicks read `customdata`:
`["detection", id]`, `["range", channel, start, end]` or `["tool", index]`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeVar

from .streams import SessionStreams

MAX_POINTS = 400  # points per trace
HOVER_CHARS = 160  # of a unit, tool arguments or output in a hover
AXES = ("offset", "time")
ACTION_COLORS = {"stop": "#c0392b", "force_text": "#d35400", "nudge": "#b7791f", "warn": "#b7791f"}
CHANNEL_COLORS = {"reasoning": "#7f8fa6", "content": "#2456c9"}
POSITIONED_CHANNELS = ("reasoning", "content", "tools")  # channels whose start/end/at are positions

T = TypeVar("T")
XOf = Callable[..., float]  # (channel, offset or tool-call index, after=False) -> x; see SessionStreams.position


def escape_hover(text: str, limit: int = HOVER_CHARS) -> str:
    """Untrusted text made safe for Plotly hover markup: cut to `limit`,
    `&`, `<`, `>` escaped, line breaks shown as ⏎."""
    if len(text) > limit:
        text = text[:limit] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")


def buckets(xs: Sequence[float], max_points: int) -> list[tuple[int, int]]:
    """Index ranges [i, j) of `xs` (ascending) grouped into at most
    `max_points` equal-width bins of the x range; each item its own group
    when there are few enough."""
    if len(xs) <= max_points:
        return [(i, i + 1) for i in range(len(xs))]
    low, width = xs[0], (xs[-1] - xs[0]) / max_points or 1
    groups: list[tuple[int, int]] = []
    current, first = None, 0
    for i, x in enumerate(xs):
        slot = min(int((x - low) / width), max_points - 1)
        if slot != current:
            if current is not None:
                groups.append((first, i))
            current, first = slot, i
    groups.append((first, len(xs)))
    return groups


def merge_intervals(intervals: Sequence[tuple[float, float]], max_points: int) -> list[tuple[float, float]]:
    """Intervals (ascending by start) as at most `max_points` intervals,
    bucketed by start like `buckets`; a bucket spans its intervals."""
    groups = buckets([lo for lo, _ in intervals], max_points)
    return [(intervals[i][0], max(hi for _, hi in intervals[i:j])) for i, j in groups]


@dataclass(frozen=True, slots=True)
class Sampling:
    """How much of the x axis a figure covers, and how finely: at most
    `max_points` points a trace, of those within `x_range` (all: None)."""

    max_points: int = MAX_POINTS
    x_range: tuple[float, float] | None = None

    def points(self, points: list[tuple[float, T]]) -> list[tuple[float, T]]:
        if self.x_range is None:
            return points
        low, high = self.x_range
        return [point for point in points if low <= point[0] <= high]

    def intervals(self, intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if self.x_range is None:
            return intervals
        low, high = self.x_range
        return [(lo, hi) for lo, hi in intervals if hi >= low and lo <= high]


def points_trace(
    name: str,
    lane: str,
    points: list[tuple[float, T]],
    *,
    hover: Callable[[T], str],
    customdata: Callable[[T], list],
    sampling: Sampling,
    noun: str,
    marker: dict,
) -> dict:
    """A marker trace on one lane from (x, item) pairs; a bucket of several
    points shows as its first one, its hover counting the bucket. `hover`
    and `customdata` are called only for the points kept."""
    points = sorted(sampling.points(points), key=itemgetter(0))
    xs, hovers, data = [], [], []
    for i, j in buckets([x for x, _ in points], sampling.max_points):
        x, item = points[i]
        xs.append(x)
        text = hover(item)
        hovers.append(text if j - i == 1 else f"{j - i:,} {noun} here; the first:<br>{text}")
        data.append(customdata(item))
    return {
        "type": "scatter", "mode": "markers", "name": name, "x": xs, "y": [lane] * len(xs),
        "hovertext": hovers, "hoverinfo": "text", "customdata": data, "marker": marker,
    }  # fmt: skip


def bars_trace(name: str, bars: dict[str, list[tuple[float, float]]], *, sampling: Sampling, color: str) -> dict:
    """Horizontal bars (a thick line per interval) on several lanes, merged
    to at most `max_points` per lane; gaps between bars are `None`."""
    xs: list[float | None] = []
    ys: list[str | None] = []
    for lane, intervals in bars.items():
        for lo, hi in merge_intervals(sorted(sampling.intervals(intervals)), sampling.max_points):
            xs += [lo, hi, None]
            ys += [lane, lane, None]
    return {
        "type": "scatter", "mode": "lines", "name": name, "x": xs, "y": ys, "hoverinfo": "skip",
        "line": {"width": 9, "color": color}, "opacity": 0.45, "connectgaps": False,
    }  # fmt: skip


class Lanes:
    """The y categories, in the order first asked for; names are escaped."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}  # name -> escaped label, in order

    @property
    def names(self) -> list[str]:
        return list(self.labels.values())

    def __call__(self, name: str) -> str:
        label = self.labels.get(name)
        if label is None:
            label = self.labels[name] = escape_hover(name)
        return label


def timeline_figure(
    streams: SessionStreams,
    detections: Sequence[dict],
    checkpoints: Sequence[dict],
    *,
    axis: str = "offset",
    max_points: int = MAX_POINTS,
    x_range: tuple[float, float] | None = None,
) -> dict:
    """The figure for `Plotly.newPlot`: `detections` as detection_to_dict
    gives them plus `event_seq`; `checkpoints` as checkpoint rows (see
    selectors.py). `axis` is "offset" or "time"; with `x_range`, the figure
    covers that stretch only (a zoom), with the same lanes and as many points.
    Without it, the whole stream shows on a range slider under the plot, and
    the plot opens zoomed to the first detection's region (`focus_range`).
    A zoom keeps the slider spanning the whole stream."""
    if axis not in AXES:
        raise ValueError(f"axis must be one of {AXES}, not {axis!r}")
    x = _x_of(streams, axis)
    lanes = Lanes()
    sampling = Sampling(max_points, x_range)
    event_x = streams.event_position if axis == "offset" else streams.event_time
    traces = [
        *_channel_traces(streams, axis, lanes, sampling),
        *_tool_traces(streams, x, lanes, sampling),
        *_turn_traces(streams, axis, lanes, sampling),
        *checkpoint_traces(checkpoints, x, lanes, sampling),
        *detection_traces(detections, x, event_x, lanes, sampling),
    ]
    whole = (0, (streams.length if axis == "offset" else streams.end_t or 0) or 1)
    return figure_of(traces, lanes, axis=axis, focus=x_range or focus_range(x, detections, axis), whole=whole)


def figure_of(
    traces: list[dict], lanes: Lanes, *, axis: str, focus: tuple[float, float] | None, whole: tuple[float, float]
) -> dict:
    """The figure of these traces: the lanes top to bottom, the plot showing
    `focus` (None: everything), the range slider `whole`."""
    # One legend entry per kind of trace (a kind may have a trace per lane); clicking it toggles them all.
    named: set[str] = set()
    for trace in traces:
        trace["legendgroup"] = trace["name"]
        trace["showlegend"] = trace["name"] not in named
        named.add(trace["name"])
    title = (
        "stream position (characters of reasoning and content, one per tool call)" if axis == "offset" else "time (s)"
    )
    # The slider is the whole session in miniature: tall enough to see its bars and grab its handles.
    slider = {"visible": True, "thickness": 0.22, "range": list(whole), "autorange": False}
    return {
        "data": traces,
        "layout": {
            "height": 130 + 34 * max(len(lanes.names), 1),
            "margin": {"l": 200, "r": 20, "t": 40, "b": 50},
            "xaxis": {
                "title": {"text": title}, "zeroline": False, "rangeslider": slider,
                **({"range": list(focus), "autorange": False} if focus else {}),
            },
            "yaxis": {
                "type": "category", "categoryorder": "array", "categoryarray": lanes.names,
                "autorange": "reversed", "fixedrange": True,
            },
            "hovermode": "closest",
            "clickmode": "event",
            "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        },
    }  # fmt: skip


def focus_range(x: XOf, detections: Sequence[dict], axis: str) -> tuple[float, float] | None:
    """Where the timeline opens: the first detection's region (from its
    start to where it fired), with as much again on either side; None when
    nothing was detected on a positioned channel. `x` as `x_of` gives it."""
    first = next((d for d in detections if d["channel"] in POSITIONED_CHANNELS), None)
    if first is None:
        return None
    lo = x(first["channel"], first["start"])
    hi = x(first["channel"], max(first["end"], first["at"]), True)
    margin = max(hi - lo, 1 if axis == "time" else 20)
    return (max(lo - margin, 0), hi + margin)


def clickable_detections(figure: dict) -> set[int]:
    """Ids of the detections the figure's markers point at (after bucketing)."""
    return {data[1] for trace in figure["data"] for data in trace.get("customdata", ()) if data[0] == "detection"}


def _channel_traces(streams: SessionStreams, axis: str, lanes: Lanes, sampling: Sampling) -> list[dict]:
    traces = []
    for channel, color in CHANNEL_COLORS.items():
        blocks = _channel_blocks(streams, channel, axis)
        if blocks:
            trace = bars_trace(channel, {lanes(channel): blocks}, sampling=sampling, color=color)
            traces.append({**trace, "opacity": 0.8})
    return traces


def _tool_traces(streams: SessionStreams, x: XOf, lanes: Lanes, sampling: Sampling) -> list[dict]:
    if not streams.tool_calls:
        return []
    lane = lanes("tools")
    traces = []
    for repeats, label, marker in (
        (False, "tool calls", {"symbol": "circle", "size": 8, "color": "#5f6b7a"}),
        (True, "repeated tool calls", {"symbol": "x", "size": 9, "color": "#c0392b"}),
    ):
        points = [(x("tools", c.index), c) for c in streams.tool_calls if (c.repeat_of is not None) == repeats]
        if points:
            trace = points_trace(
                label, lane, points, hover=_tool_hover, customdata=lambda c: ["tool", c.index],
                sampling=sampling, noun=label, marker=marker,
            )  # fmt: skip
            traces.append(trace)
    return traces


def _turn_traces(streams: SessionStreams, axis: str, lanes: Lanes, sampling: Sampling) -> list[dict]:
    if not streams.turns:
        return []
    points = [(t.position if axis == "offset" else (t.t or 0.0), t) for t in streams.turns]
    trace = points_trace(
        "turns", lanes("turns"), points, hover=lambda t: f"turn {t.number:,}", customdata=lambda t: ["turn", t.number],
        sampling=sampling, noun="turns", marker={"symbol": "line-ns-open", "size": 12, "color": "#1d2330"},
    )  # fmt: skip
    return [trace]


def checkpoint_traces(checkpoints: Sequence[dict], x: XOf, lanes: Lanes, sampling: Sampling) -> list[dict]:
    if not checkpoints:
        return []
    lane_of = {row["detector"]: lanes(f"{row['detector']} checkpoints") for row in checkpoints}
    ranges: dict[str, list[tuple[float, float]]] = {}
    for row in checkpoints:
        bar = (x(row["channel"], row["start"]), x(row["channel"], row["end"], True))
        ranges.setdefault(lane_of[row["detector"]], []).append(bar)
    traces = [bars_trace("checkpoint ranges", ranges, sampling=sampling, color="#7f8fa6")]
    for found, label, color in ((False, "checkpoint: no loop", "#7f8fa6"), (True, "checkpoint: loop", "#c0392b")):
        by_lane: dict[str, list[tuple[float, dict]]] = {}
        for row in checkpoints:
            if bool(row["result"]) == found:
                point = (x(row["channel"], row["checkpoint"], True), row)
                by_lane.setdefault(lane_of[row["detector"]], []).append(point)
        for lane, points in by_lane.items():
            trace = points_trace(
                label, lane, points, hover=_checkpoint_hover,
                customdata=lambda row: ["range", row["channel"], row["start"], row["end"]],
                sampling=sampling, noun="checkpoints", marker={"symbol": "diamond", "size": 10, "color": color},
            )  # fmt: skip
            traces.append(trace)
    return traces


def detection_traces(
    detections: Sequence[dict], x: XOf, event_x: Callable[[int], float | None], lanes: Lanes, sampling: Sampling
) -> list[dict]:
    """A bar per repeated region and a marker where each detection fired;
    `event_x` places one of the `session` channel at the event that fired it."""
    if not detections:
        return []
    regions: dict[str, list[tuple[float, float]]] = {}
    fired: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for d in detections:
        lane = lanes(d["detector"])
        if d["channel"] in POSITIONED_CHANNELS:
            regions.setdefault(lane, []).append((x(d["channel"], d["start"]), x(d["channel"], d["end"], True)))
            at = x(d["channel"], d["at"], True)
        else:  # the `session` channel has no positions: where the event that fired it was
            at = event_x(d["event_seq"])
        fired.setdefault((d["action"], lane), []).append((at, d))
    traces = [bars_trace("repeated regions", regions, sampling=sampling, color="#c0392b")] if regions else []
    for (action, lane), points in fired.items():
        marker = {"symbol": "triangle-down", "size": 13, "color": ACTION_COLORS.get(action, "#c0392b")}
        trace = points_trace(
            f"detection: {action}", lane, points, hover=_detection_hover, customdata=lambda d: ["detection", d["id"]],
            sampling=sampling, noun="detections", marker=marker,
        )  # fmt: skip
        traces.append(trace)
    return traces


def _x_of(streams: SessionStreams, axis: str) -> XOf:
    if axis == "offset":
        return streams.position
    return lambda channel, offset, after=False: streams.time(channel, offset, after) or 0.0


def _channel_blocks(streams: SessionStreams, channel: str, axis: str) -> list[tuple[float, float]]:
    """The stretches where the channel streamed without another channel's
    text between: [position, end position], or in time from its first
    delta's `t` to the `t` of the event after its last delta."""
    blocks: list[tuple[float, float]] = []
    end_position = None
    for run in streams.runs.get(channel, []):
        if axis == "offset":
            lo, hi = run.position, run.position + run.end - run.start
        else:
            lo, hi = run.t or 0.0, streams.event_time(run.seq + 1) or 0.0
        if run.position == end_position:
            blocks[-1] = (blocks[-1][0], hi)
        else:
            blocks.append((lo, hi))
        end_position = run.position + run.end - run.start
    return blocks


def _tool_hover(call) -> str:
    result = {None: "no result", True: "ok", False: "failed"}[call.ok]
    lines = [f"<b>#{call.index:,} {escape_hover(call.name)}</b> (turn {call.turn:,})", escape_hover(call.args)]
    lines.append(f"result: {result}" + (f": {escape_hover(call.output)}" if call.output else ""))
    if call.repeat_of is not None:
        lines.append(f"repeat of #{call.repeat_of:,} (call {call.occurrence:,} with these arguments)")
    return "<br>".join(lines)


def _checkpoint_hover(row: dict) -> str:
    return "<br>".join([
        f"<b>{escape_hover(row['detector'])}</b> checkpoint {row['checkpoint']:,}",
        f"{escape_hover(row['channel'])} range {row['start']:,}–{row['end']:,}",
        f"check: {escape_hover(row['check'])}",
        f"result: {escape_hover(row['result']) if row['result'] else 'no loop'}",
    ])  # fmt: skip


def _detection_hover(d: dict) -> str:
    return "<br>".join([
        f"<b>{escape_hover(d['detector'])}</b> · {escape_hover(d['type'])} · {escape_hover(d['action'])}",
        f"{escape_hover(d['channel'])} {d['start']:,}–{d['end']:,}, fired at {d['at']:,}",
        f"unit: {escape_hover(d['unit'])}",
        f"period {d['period']:,} · repeats {d['repeats']:,}",
    ])  # fmt: skip


def summary_figure(
    bins: Sequence[dict],
    detections: Sequence[dict],
    checkpoints: Sequence[dict],
    *,
    x: XOf,
    event_x: Callable[[int], float | None],
    axis: str,
    whole: tuple[float, float],
    x_range: tuple[float, float] | None = None,
) -> dict:
    """`timeline_figure` of a session too long to lay out per request, from
    a summary of its conversation's items: `bins` as
    `transcripts.layout_rows.layout_bins` counts them (at most `MAX_POINTS`
    over the figure's stretch). Each bin shows as one bar of text per
    channel, one marker of its tool calls, of its repeated ones and of its
    turns, the hover counting them; detections and checkpoints are placed
    exactly (`x`, `event_x` as `timeline_figure`'s)."""
    lanes = Lanes()
    sampling = Sampling(MAX_POINTS, x_range)
    by_kind: dict[str, list[dict]] = {}
    for row in bins:
        by_kind.setdefault(row["kind"], []).append(row)
    traces = []
    for channel, color in CHANNEL_COLORS.items():
        if channel in by_kind:
            spans = {lanes(channel): [(row["x0"], row["x1"]) for row in by_kind[channel]]}
            traces.append({**bars_trace(channel, spans, sampling=Sampling(MAX_POINTS), color=color), "opacity": 0.8})
    tools = by_kind.get("tools", [])
    repeated = [row for row in tools if row["repeated"]]
    for rows, label, hover, marker in (
        (tools, "tool calls", _calls_hover, {"symbol": "circle", "size": 8, "color": "#5f6b7a"}),
        (repeated, "repeated tool calls", _repeats_hover, {"symbol": "x", "size": 9, "color": "#c0392b"}),
    ):
        if rows:
            traces.append(_bins_trace(label, lanes("tools"), rows, hover, lambda row: ["tool", row["first"]], marker))
    if "turn" in by_kind:
        marker = {"symbol": "line-ns-open", "size": 12, "color": "#1d2330"}
        turn_data = lambda row: ["turn", row["turn"]]  # noqa: E731
        traces.append(_bins_trace("turns", lanes("turns"), by_kind["turn"], _turns_hover, turn_data, marker))
    traces += checkpoint_traces(checkpoints, x, lanes, sampling)
    traces += detection_traces(detections, x, event_x, lanes, sampling)
    return figure_of(traces, lanes, axis=axis, focus=x_range or focus_range(x, detections, axis), whole=whole)


def _bins_trace(name: str, lane: str, rows: list[dict], hover, customdata, marker: dict) -> dict:
    return {
        "type": "scatter", "mode": "markers", "name": name, "x": [row["x0"] for row in rows], "y": [lane] * len(rows),
        "hovertext": [hover(row) for row in rows], "hoverinfo": "text",
        "customdata": [customdata(row) for row in rows], "marker": marker,
    }  # fmt: skip


def _calls_hover(row: dict) -> str:
    if row["size"] == 1:
        return f"tool call #{row['first']:,}"
    return f"{row['size']:,} tool calls here; the first: #{row['first']:,}"


def _repeats_hover(row: dict) -> str:
    return f"{row['repeated']:,} repeated tool calls here (of {row['size']:,}, from #{row['first']:,})"


def _turns_hover(row: dict) -> str:
    return (
        f"turn {row['turn']:,}"
        if row["items"] == 1
        else f"{row['items']:,} turns here; the first: turn {row['turn']:,}"
    )
