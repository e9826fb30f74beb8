"""conversation.py: the conversation's items as the page shows them (with
the windows of long texts and tool runs), which items open first, and the
detections grouped by the loop they cover."""

from __future__ import annotations

from loopguard_site.timeline.conversation import (
    CONTEXT_ITEMS,
    HEAD_ITEMS,
    ItemIndex,
    conversation_blocks,
    detection_groups,
    item_views,
)
from loopguard_site.timeline.panels import HEAD_CALLS, HEAD_CHARS, MAX_DETECTION_WINDOWS
from loopguard_site.timeline.streams import streams_from_events


def detection(ident, start, end, at, channel="reasoning", period=2, detector="d", kind="t", action="warn"):
    return {"id": ident, "detector": detector, "type": kind, "channel": channel, "start": start, "end": end,
            "at": at, "period": period, "action": action}  # fmt: skip


def streams(events):
    return streams_from_events(enumerate(events, start=1))


def test_the_items_follow_the_conversation_in_order():
    s = streams([
        {"type": "session"}, {"type": "user", "text": "Fix <it>\nplease"}, {"type": "turn"},
        {"type": "reasoning", "text": "Think"}, {"type": "reasoning", "text": "ing."},
        {"type": "content", "text": "I will look."},
        {"type": "tool_call", "name": "ls", "args": {}, "id": "a"},
        {"type": "tool_result", "id": "a", "output": "x\ny"},
        {"type": "tool_call", "name": "cat", "args": {"p": 1}, "id": "b"}, {"type": "finish", "reason": "tool_calls"},
        {"type": "tool_result", "id": "b", "ok": False, "output": "no"},
        {"type": "turn"}, {"type": "reasoning", "text": "Again."}, {"type": "content", "text": "Done."},
        {"type": "finish", "reason": "stop"},
    ])  # fmt: skip
    views = item_views(s, [], 0, len(s.items))

    assert [(v["kind"], v["turn"], v.get("start"), v.get("length"), v["text"]) for v in views] == [
        ("user", 0, None, None, "Fix <it>\nplease"),
        ("turn", 1, None, None, ""),
        ("reasoning", 1, 0, 9, ""),
        ("content", 1, 0, 12, ""),
        ("tools", 1, 0, 2, ""),
        ("finish", 1, None, None, "tool_calls"),
        ("turn", 2, None, None, ""),
        ("reasoning", 2, 9, 6, ""),
        ("content", 2, 12, 5, ""),
        ("finish", 2, None, None, "stop"),
    ]
    rows = views[4]["blocks"][0]["rows"]
    assert [(r["name"], r["ok"], r["output"]) for r in rows] == [("ls", True, "x\ny"), ("cat", False, "no")]
    assert "".join(i["text"] for i in views[2]["blocks"][0]["items"]) == "Thinking."


def test_long_reasoning_starts_collapsed_unless_a_detection_is_in_it():
    s = streams([
        {"type": "turn"}, {"type": "reasoning", "text": "a" * 5000}, {"type": "turn"},
        {"type": "reasoning", "text": "b" * 5000}, {"type": "turn"}, {"type": "reasoning", "text": "c"},
    ])  # fmt: skip
    views = item_views(s, [detection(1, 6000, 6010, 6010)], 0, len(s.items))
    assert [v["open"] for v in views if v["kind"] == "reasoning"] == [False, True, True]


def test_a_long_text_item_shows_head_and_detection_windows_with_gaps_and_only_its_channel():
    s = streams([{"type": "reasoning", "text": "x" * 50_000}, {"type": "content", "text": "y" * 10}])
    detections = [detection(1, 20_000, 20_010, 20_011), detection(2, 5, 6, 7, channel="content")]
    (view,) = item_views(s, detections, 0, 1)
    assert [(b["gap"], b["start"], b["end"]) for b in view["blocks"]] == [
        (False, 0, HEAD_CHARS),
        (True, HEAD_CHARS, 19_700),
        (False, 19_700, 20_311),
        (True, 20_311, 50_000),
    ]
    assert {i["detection"] for b in view["blocks"] if not b["gap"] for i in b["items"] if "marker" in i} == {1}


def test_only_the_first_detections_open_windows():
    s = streams([{"type": "reasoning", "text": "x" * 1_000_000}])
    detections = [detection(i, 10_000 * i, 10_000 * i + 5, 10_000 * i + 5) for i in range(1, 60)]
    windows = [b for b in item_views(s, detections, 0, 1)[0]["blocks"] if not b["gap"]]
    assert len(windows) == 1 + MAX_DETECTION_WINDOWS
    assert sum(b["end"] - b["start"] for b in windows) == HEAD_CHARS + MAX_DETECTION_WINDOWS * 605


def test_a_long_tool_run_marks_detections_fired_rows_and_repeats():
    s = streams([{"type": "tool_call", "name": "ls", "args": {"n": i // 60}} for i in range(120)])
    found = {**detection(9, 100, 104, 104, channel="tools"), "detector": "tool_repetition"}
    (view,) = item_views(s, [found], 0, 1)
    shown = [(b["gap"], b["start"], b["end"]) for b in view["blocks"]]
    assert shown == [(False, 0, HEAD_CALLS), (True, HEAD_CALLS, 98), (False, 98, 106), (True, 106, 120)]
    rows = view["blocks"][2]["rows"]
    assert [(r["index"], r["detections"], r["repeat_of"], r["occurrence"]) for r in rows[1:4]] == [
        (99, [], 60, 40), (100, [9], 60, 41), (101, [9], 60, 42),
    ]  # fmt: skip
    assert [r["fired"] for r in rows if r["fired"]] == [[{"id": 9, "detector": "tool_repetition"}]]
    assert rows[5]["index"] == 103


def test_the_conversation_shows_its_head_and_the_items_around_each_detection():
    events = []
    for n in range(500):
        events += [{"type": "turn"}, {"type": "content", "text": f"step {n:03d}. "}]
    s = streams(events)  # items: turn, content, turn, content, ...; item 2k + 1 holds "step k"
    start = s.texts["content"].index("step 300")
    shown = conversation_blocks(
        len(s.items), [detection(1, start, start + 5, start + 9, channel="content")], ItemIndex(s)
    )
    assert [(b["gap"], b["start"], b["end"]) for b in shown] == [
        (False, 0, HEAD_ITEMS),
        (True, HEAD_ITEMS, 601 - CONTEXT_ITEMS),
        (False, 601 - CONTEXT_ITEMS, 602 + CONTEXT_ITEMS),
        (True, 602 + CONTEXT_ITEMS, 1000),
    ]


def test_detections_of_one_loop_are_grouped_with_the_detectors_that_agreed():
    detections = [  # in firing order
        detection(1, 0, 3, 3, channel="tools", detector="tool_repetition", kind="same_call", action="warn"),
        detection(2, 1, 1, 2, channel="session", detector="backoff", kind="retry"),
        detection(3, 0, 4, 4, channel="tools", detector="repeated_failure", kind="failing", action="stop"),
        detection(4, 2, 5, 5, channel="tools", detector="tool_repetition", kind="same_call"),
        detection(5, 100, 140, 150, channel="content", detector="text_loop", kind="sentence"),
        detection(6, 120, 200, 210, channel="content", detector="content_chanting", kind="chant"),
        detection(7, 300, 320, 330, channel="content", detector="text_loop", kind="sentence"),
        detection(8, 1, 1, 3, channel="session", detector="backoff", kind="retry"),
        detection(9, 9, 12, 12, channel="tools", detector="tool_repetition", kind="same_call"),
    ]
    groups = detection_groups(detections)
    assert [
        (g["ids"], g["channel"], g["start"], g["end"], g["at"], g["detectors"], g["action"]) for g in groups
    ] == [
        ([1, 3, 4], "tools", 0, 5, 3,
         [("tool_repetition", "same_call", 2), ("repeated_failure", "failing", 1)], "stop"),
        ([2, 8], "session", 1, 1, 2, [("backoff", "retry", 2)], "warn"),
        ([5, 6], "content", 100, 200, 150, [("text_loop", "sentence", 1), ("content_chanting", "chant", 1)], "warn"),
        ([7], "content", 300, 320, 330, [("text_loop", "sentence", 1)], "warn"),
        ([9], "tools", 9, 12, 12, [("tool_repetition", "same_call", 1)], "warn"),
    ]  # fmt: skip
    assert groups[0]["first"]["id"] == 1
