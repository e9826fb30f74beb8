"""streams.py: offsets, stream positions, times, tool calls and repeats."""

from __future__ import annotations

from loopguard_site.timeline.streams import OUTPUT_CHARS, TextRun, ToolCall, Turn, streams_from_events

EVENTS = [
    {"type": "session", "model": "m"},
    {"type": "turn", "t": 0.5},
    {"type": "reasoning", "text": "abc", "t": 1.0},
    {"type": "reasoning", "text": "de"},
    {"type": "content", "text": "XY", "t": 2.0},
    {"type": "tool_call", "name": "read", "args": {"b": 1, "a": 2}, "id": "c1"},
    {"type": "tool_result", "id": "c1", "ok": False, "output": "no such file"},
    {"type": "turn", "t": 3.0},
    {"type": "reasoning", "text": "fgh"},
    {"type": "tool_call", "name": "read", "args": {"a": 2, "b": 1}},
    {"type": "tool_result", "ok": True, "output": "x" * (OUTPUT_CHARS + 100)},
    {"type": "content", "text": "Z", "t": 4.5},
]


def streams():
    return streams_from_events(enumerate(EVENTS, start=1))


def test_it_assembles_each_channels_text_with_the_runs_each_event_added():
    s = streams()
    assert s.texts == {"reasoning": "abcdefgh", "content": "XYZ"}
    assert s.runs == {
        "reasoning": [
            TextRun("reasoning", 0, 3, 0, 3, 1.0),
            TextRun("reasoning", 3, 5, 3, 4, 1.0),
            TextRun("reasoning", 5, 8, 8, 9, 3.0),
        ],
        "content": [TextRun("content", 0, 2, 5, 5, 2.0), TextRun("content", 2, 3, 12, 12, 4.5)],
    }
    assert (s.length, s.has_time, s.end_t) == (13, True, 4.5)


def test_it_lists_tool_calls_with_their_results_and_marks_repeats():
    s = streams()
    assert s.tool_calls == [
        ToolCall(0, 6, "read", '{"a": 2, "b": 1}', 7, 2.0, 1, "c1", False, "no such file", None, 1),
        ToolCall(1, 10, "read", '{"a": 2, "b": 1}', 11, 3.0, 2, None, True, "x" * OUTPUT_CHARS, 0, 2),
    ]
    assert s.turns == [Turn(1, 2, 0, 0.5), Turn(2, 8, 8, 3.0)]


def test_it_maps_channel_offsets_and_tool_indices_to_stream_positions_and_times():
    s = streams()
    positions = [s.position("reasoning", o) for o in (0, 2, 3, 5, 7, 8)]
    assert positions == [0, 2, 3, 8, 10, 11]
    assert [s.position("content", o) for o in (0, 2, 3)] == [5, 12, 13]
    assert [s.position("tools", i) for i in (0, 1, 2)] == [7, 11, 13]
    assert [s.time("reasoning", o) for o in (0, 4, 6, 8)] == [1.0, 1.0, 3.0, 4.5]
    assert [s.time("tools", i) for i in (0, 1, 2)] == [2.0, 3.0, 4.5]
    # "Read up to": a boundary between runs maps to the end of the earlier run.
    assert [s.position("reasoning", o, after=True) for o in (0, 3, 5, 8)] == [0, 3, 5, 11]
    assert [s.position("tools", i, after=True) for i in (0, 1, 2)] == [7, 8, 12]
    assert [s.time("reasoning", o, after=True) for o in (5, 6)] == [1.0, 3.0]
    assert [s.time("tools", i, after=True) for i in (1, 2, 3)] == [2.0, 3.0, 4.5]
    assert [s.event_position(seq) for seq in (1, 6, 7, 12, 99)] == [0, 7, 8, 12, 13]
    assert [s.event_time(seq) for seq in (1, 2, 4, 99)] == [None, 0.5, 1.0, 4.5]


def test_a_session_without_text_or_time_maps_everything_to_zero():
    s = streams_from_events([(1, {"type": "finish", "reason": "stop"})])
    assert (s.texts, s.length, s.has_time) == ({"reasoning": "", "content": ""}, 0, False)
    assert (s.position("reasoning", 5), s.time("content", 0), s.position("tools", 0)) == (0, None, 0)
