"""charts.py: lanes, x positions, escaped hover text, bounded traces."""

from __future__ import annotations

import json

import pytest

from loopguard_site.timeline.charts import buckets, escape_hover, merge_intervals, timeline_figure
from loopguard_site.timeline.streams import streams_from_events

EVENTS = [
    {"type": "turn", "t": 0.0},
    {"type": "reasoning", "text": "r" * 10, "t": 1.0},
    {"type": "content", "text": "c" * 5, "t": 2.0},
    {"type": "tool_call", "name": "<run>", "args": {"cmd": "a&b"}, "t": 3.0},
    {"type": "tool_result", "ok": False, "output": "<script>alert(1)</script>"},
    {"type": "turn", "t": 4.0},
    {"type": "tool_call", "name": "<run>", "args": {"cmd": "a&b"}, "t": 5.0},
    {"type": "reasoning", "text": "r" * 10, "t": 6.0},
]
DETECTION = {
    "id": 41, "detector": "text_loop", "type": "block_cycle", "channel": "reasoning", "start": 2, "end": 18,
    "at": 19, "unit": "<img src=x onerror=alert(1)>\nnext", "period": 4, "repeats": 4, "action": "stop",
    "message": "m", "turn": 2, "event_seq": 8,
}  # fmt: skip
STALL = {**DETECTION, "id": 42, "detector": "stall", "channel": "session", "start": 0, "end": 0, "at": 0,
         "unit": "", "action": "warn", "event_seq": 6}  # fmt: skip
CHECKPOINT = {"detector": "reasoning_checkpoint", "channel": "reasoning", "checkpoint": 10, "start": 5, "end": 10,
              "check": "short_unit_loop", "result": "", "turn": 1, "event_seq": 3}  # fmt: skip


def figure(axis="offset", **kwargs):
    streams = streams_from_events(enumerate(EVENTS, start=1))
    return timeline_figure(
        streams, [DETECTION, STALL], [CHECKPOINT, {**CHECKPOINT, "result": "loop"}], axis=axis, **kwargs
    )


def traces(fig):
    return {t["name"]: t for t in fig["data"]}


def test_it_has_a_lane_per_channel_tools_turns_checkpoint_detector_and_detector():
    assert figure()["layout"]["yaxis"]["categoryarray"] == [
        "reasoning", "content", "tools", "turns", "reasoning_checkpoint checkpoints", "text_loop", "stall",
    ]  # fmt: skip


def test_markers_stand_at_stream_positions():
    t = traces(figure())
    assert (t["reasoning"]["x"], t["reasoning"]["y"]) == (
        [0, 10, None, 17, 27, None], ["reasoning", "reasoning", None, "reasoning", "reasoning", None]
    )  # fmt: skip
    assert t["content"]["x"] == [10, 15, None]
    assert (t["tool calls"]["x"], t["repeated tool calls"]["x"], t["turns"]["x"]) == ([15], [16], [0, 16])
    # Region 2..18 and `at` 19 of reasoning: the second run (offsets 10..20) starts at position 17.
    assert t["repeated regions"]["x"] == [2, 25, None]
    assert (t["detection: stop"]["x"], t["detection: stop"]["customdata"]) == ([26], [["detection", 41]])
    # The session channel has no positions: the event that fired it (seq 6, after 15 characters and a call).
    assert (t["detection: warn"]["x"], t["detection: warn"]["y"]) == ([16], ["stall"])
    assert (t["checkpoint: no loop"]["x"], t["checkpoint: loop"]["customdata"]) == (
        [10],
        [["range", "reasoning", 5, 10]],
    )
    # Checkpoint 10 ("read up to 10") is where the first run ended, not where the second began.
    assert t["checkpoint ranges"]["x"] == [5, 10, None, 5, 10, None]  # both evaluations of the range


def test_the_time_axis_uses_the_events_t():
    t = traces(figure("time"))
    assert (t["tool calls"]["x"], t["repeated tool calls"]["x"], t["turns"]["x"]) == ([3.0], [5.0], [0.0, 4.0])
    assert (t["detection: stop"]["x"], t["checkpoint: no loop"]["x"]) == ([6.0], [1.0])
    # A channel streams from its delta's t until the next event's (the last delta: until the session ends).
    assert (t["reasoning"]["x"], t["content"]["x"]) == ([1.0, 2.0, None, 6.0, 6.0, None], [2.0, 3.0, None])
    assert figure("time")["layout"]["xaxis"]["title"]["text"] == "time (s)"
    with pytest.raises(ValueError, match="axis must be one of"):
        figure("seq")


def test_hover_text_shows_unit_period_and_repeats_escaped():
    t = traces(figure())
    assert t["detection: stop"]["hovertext"] == [
        "<b>text_loop</b> · block_cycle · stop<br>reasoning 2–18, fired at 19<br>"
        "unit: &lt;img src=x onerror=alert(1)&gt;⏎next<br>period 4 · repeats 4"
    ]
    assert t["tool calls"]["hovertext"] == [
        '<b>#0 &lt;run&gt;</b> (turn 1)<br>{"cmd": "a&amp;b"}<br>result: failed: &lt;script&gt;alert(1)&lt;/script&gt;'
    ]
    assert t["repeated tool calls"]["hovertext"][0].endswith("<br>repeat of #0 (call 2 with these arguments)")
    assert "<script>" not in json.dumps(figure()) and "<img" not in json.dumps(figure())


def test_escape_hover_cuts_long_text():
    assert escape_hover("a<" * 100, limit=3) == "a&lt;a…"


def test_buckets_and_merged_intervals_are_bounded():
    assert buckets([0, 1, 2], 3) == [(0, 1), (1, 2), (2, 3)]
    assert buckets([0, 1, 2, 9, 10], 2) == [(0, 3), (3, 5)]
    assert merge_intervals([(0, 1), (2, 3), (8, 12), (10, 11)], 2) == [(0, 3), (8, 12)]


def test_every_trace_is_bounded_for_a_huge_session():
    events = []
    for i in range(50_000):
        events += [{"type": "turn"}, {"type": "reasoning", "text": "ab"}, {"type": "content", "text": "c"}]
        events.append({"type": "tool_call", "name": "ls", "args": {"i": i % 7}})
    streams = streams_from_events(enumerate(events, start=1))
    detections = [{**DETECTION, "id": i, "start": 2 * i, "end": 2 * i + 2, "at": 2 * i + 2} for i in range(5000)]
    fig = timeline_figure(streams, detections, [], max_points=100)
    sizes = {t["name"]: len([x for x in t["x"] if x is not None]) for t in fig["data"]}
    assert sizes == {
        "reasoning": 200, "content": 200, "tool calls": 7, "repeated tool calls": 100, "turns": 100,
        "repeated regions": 200, "detection: stop": 100,
    }  # fmt: skip
    first = traces(fig)["turns"]["hovertext"][0]
    assert first == "500 turns here; the first:<br>turn 1"


def test_traces_of_one_kind_on_several_lanes_share_one_legend_entry():
    streams = streams_from_events(enumerate(EVENTS, start=1))
    other = {**DETECTION, "id": 43, "detector": "other_loop"}
    fig = timeline_figure(streams, [DETECTION, other], [])
    stops = [(t["y"], t["legendgroup"], t["showlegend"]) for t in fig["data"] if t["name"] == "detection: stop"]
    assert stops == [(["text_loop"], "detection: stop", True), (["other_loop"], "detection: stop", False)]
    assert all(t["showlegend"] for t in fig["data"] if t["name"] != "detection: stop")


def test_a_zoomed_figure_covers_only_its_x_range_with_the_same_lanes():
    fig = figure(x_range=(10, 16))
    t = traces(fig)
    assert (t["reasoning"]["x"], t["content"]["x"]) == ([0, 10, None], [10, 15, None])
    assert (t["tool calls"]["x"], t["repeated tool calls"]["x"], t["turns"]["x"]) == ([15], [16], [16])
    assert (t["detection: stop"]["x"], t["repeated regions"]["x"]) == ([], [2, 25, None])
    assert fig["layout"]["xaxis"]["range"] == [10, 16]
    assert fig["layout"]["yaxis"]["categoryarray"] == figure()["layout"]["yaxis"]["categoryarray"]


def test_zooming_into_a_huge_session_shows_every_point_of_the_stretch():
    events = []
    for _ in range(50_000):
        events += [
            {"type": "turn"},
            {"type": "reasoning", "text": "abc"},
            {"type": "tool_call", "name": "ls", "args": {}},
        ]
    streams = streams_from_events(enumerate(events, start=1))
    whole = traces(timeline_figure(streams, [], [], max_points=100))["turns"]
    zoomed = traces(timeline_figure(streams, [], [], max_points=100, x_range=(0, 396)))["turns"]
    assert (len(whole["x"]), whole["hovertext"][1]) == (100, "500 turns here; the first:<br>turn 501")
    assert (zoomed["x"], zoomed["hovertext"][:2]) == (list(range(0, 400, 4)), ["turn 1", "turn 2"])
