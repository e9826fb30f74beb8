"""panels.py: which windows of text and tool calls the page shows first."""

from __future__ import annotations

from loopguard_site.timeline.panels import (
    PAGE_CHARS,
    blocks,
    plan_ranges,
    text_window,
)


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
