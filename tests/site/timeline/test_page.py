"""page.py: what the session page gets for a session with many detections."""

from __future__ import annotations

from loopguard_site.timeline.charts import MAX_POINTS, clickable_detections
from loopguard_site.timeline.page import LISTED, session_page_parts
from loopguard_site.timeline.streams import streams_from_events


def test_it_lists_the_first_detections_and_targets_only_those_a_click_can_reach():
    streams = streams_from_events(enumerate([{"type": "reasoning", "text": "ab" * 50_000}], start=1))
    detections = [
        {"id": i, "detector": "text_loop", "type": "t", "channel": "reasoning", "start": 10 * i, "end": 10 * i + 4,
         "at": 10 * i + 5, "unit": "ab", "period": 2, "repeats": 2, "action": "warn", "event_seq": 1}
        for i in range(1, 2001)
    ]  # fmt: skip
    parts = session_page_parts(streams, detections, [])

    # Regions that do not overlap: one loop (group) each.
    assert [g["ids"] for g in parts["groups"]] == [[i] for i in range(1, LISTED + 1)]
    assert (parts["group_count"], parts["detection_count"]) == (2000, 2000)
    clickable = clickable_detections(parts["figures"]["offset"])
    assert len(clickable) == MAX_POINTS
    assert set(parts["targets"]["detections"]) == clickable | set(range(1, LISTED + 1))
    assert parts["targets"]["detections"][1] == {
        "channel": "reasoning", "start": 10, "end": 14, "at": 15, "items": (0, 0)
    }  # fmt: skip
    assert parts["targets"]["first"] == 1
    assert "time" not in parts["figures"]
    assert [[i["kind"] for i in b["items"]] for b in parts["conversation"]] == [["reasoning"]]
