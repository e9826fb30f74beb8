"""panels.py: which windows of text and tool calls the page shows first."""

from __future__ import annotations

from loopguard_site.timeline.panels import (
    HEAD_CALLS,
    HEAD_CHARS,
    MAX_DETECTION_WINDOWS,
    PAGE_CHARS,
    blocks,
    plan_ranges,
    text_panel,
    text_window,
    tool_panel,
)
from loopguard_site.timeline.streams import streams_from_events


def detection(ident, start, end, at, channel="reasoning", period=2):
    return {"id": ident, "detector": "d", "channel": channel, "start": start, "end": end, "at": at, "period": period}


def test_plan_ranges_keeps_the_head_and_windows_around_each_span_merged():
    ranges = plan_ranges(10_000, [(500, 700), (900, 1000), (6000, 9000)], head=100, context=50, page=1000)
    assert ranges == [(0, 100), (450, 750), (850, 1050), (5950, 6450), (8550, 9050)]
    assert plan_ranges(1000, [(90, 120), (140, 150)], head=100, context=50, page=1000) == [(0, 200)]


def test_blocks_fill_the_gaps_between_windows():
    assert blocks(100, [(0, 10), (40, 60)]) == [
        {"gap": False, "start": 0, "end": 10},
        {"gap": True, "start": 10, "end": 40},
        {"gap": False, "start": 40, "end": 60},
        {"gap": True, "start": 60, "end": 100},
    ]


def test_a_text_window_is_at_most_a_page_and_carries_its_highlights():
    text = "ab" * 10_000
    window = text_window(text, [detection(1, 4, 8, 9)], 2, 10**9)
    assert (window["start"], window["end"]) == (2, 2 + PAGE_CHARS)
    assert [i.get("marker") or i["classes"] for i in window["items"][:5]] == [
        [], "onset", ["hl-region", "hl-unit"], ["hl-region", "hl-rep", "hl-rep-odd"], [],
    ]  # fmt: skip


def test_the_text_panel_shows_head_and_detection_windows_with_gaps_and_only_its_channel():
    text = "x" * 50_000
    detections = [detection(1, 20_000, 20_010, 20_011), detection(2, 5, 6, 7, channel="content")]
    panel = text_panel("reasoning", text, detections)
    assert [(b["gap"], b["start"], b["end"]) for b in panel["blocks"]] == [
        (False, 0, HEAD_CHARS),
        (True, HEAD_CHARS, 19_700),
        (False, 19_700, 20_311),
        (True, 20_311, 50_000),
    ]
    assert {i["detection"] for b in panel["blocks"] if not b["gap"] for i in b["items"] if "marker" in i} == {1}


def test_only_the_first_detections_open_windows():
    text = "x" * 1_000_000
    detections = [detection(i, 10_000 * i, 10_000 * i + 5, 10_000 * i + 5) for i in range(1, 60)]
    windows = [b for b in text_panel("reasoning", text, detections)["blocks"] if not b["gap"]]
    assert len(windows) == 1 + MAX_DETECTION_WINDOWS
    assert sum(b["end"] - b["start"] for b in windows) == HEAD_CHARS + MAX_DETECTION_WINDOWS * 605


def test_the_tool_panel_marks_detections_fired_rows_and_repeats():
    events = [(i + 1, {"type": "tool_call", "name": "ls", "args": {"n": i // 60}}) for i in range(120)]
    calls = streams_from_events(events).tool_calls
    panel = tool_panel(calls, [{**detection(9, 100, 104, 104, channel="tools"), "detector": "tool_repetition"}])
    shown = [(b["gap"], b["start"], b["end"]) for b in panel["blocks"]]
    assert shown == [(False, 0, HEAD_CALLS), (True, HEAD_CALLS, 98), (False, 98, 106), (True, 106, 120)]
    rows = panel["blocks"][2]["rows"]
    assert [(r["index"], r["detections"], r["repeat_of"], r["occurrence"]) for r in rows[1:4]] == [
        (99, [], 60, 40), (100, [9], 60, 41), (101, [9], 60, 42),
    ]  # fmt: skip
    assert [r["fired"] for r in rows if r["fired"]] == [[{"id": 9, "detector": "tool_repetition"}]]
    assert rows[5]["index"] == 103
    assert rows[5]["fired"] == [{"id": 9, "detector": "tool_repetition"}]
