"""Seed 001's two nudges: truncated tool calls and tool intent without a call."""

from __future__ import annotations

import pytest

from detector.tool_intent import tool_intent_phrase
from detector.tool_messages import NOTICES
from tests.detector.tools.stream import call, detections, only, result, run, turn

CUT = "truncated_tool_calls"


def truncated(*names: str) -> list[dict]:
    return turn(*(call(name, content="x" * 40) for name in names), reason="length")


@pytest.mark.parametrize(
    "n, expected",
    [
        (1, [(CUT, 0, 1, 1, 1, "nudge")]),
        (2, [(CUT, 0, 1, 1, 1, "nudge"), (CUT, 1, 2, 2, 2, "nudge")]),
        (3, [(CUT, 0, 1, 1, 1, "nudge"), (CUT, 1, 2, 2, 2, "nudge"), (CUT, 2, 3, 3, 3, "force_text")]),
    ],
)
def test_truncated_tool_call_turns_nudge_then_force_text_at_3(n, expected):
    events = [event for _ in range(n) for event in truncated("write_file")]
    assert run(only("truncation"), events) == expected


def test_truncation_names_the_discarded_calls():
    (found,) = detections(only("truncation"), truncated("write_file", "edit"))
    assert (found.start, found.end, found.period, found.unit) == (0, 2, 2, "write_file, edit")
    assert found.extra == {"notice": NOTICES[CUT]}


def test_a_text_reply_does_not_reset_the_truncation_count():
    events = (
        truncated("a") + turn({"type": "content", "text": "Sorry."}, reason="stop") + truncated("a") + truncated("a")
    )
    assert run(only("truncation"), events)[-1] == (CUT, 2, 3, 3, 3, "force_text")


def test_a_turn_whose_calls_went_through_resets_the_count():
    events = truncated("a") + truncated("a") + turn(call("b"), result()) + truncated("a")
    assert run(only("truncation"), events)[-1] == (CUT, 3, 4, 4, 1, "nudge")


def test_a_length_finish_without_tool_calls_is_not_truncated_calls():
    events = turn({"type": "content", "text": "long answer"}, reason="length") * 3
    assert run(only("truncation"), events) == []


# Tool intent without a call.
@pytest.mark.parametrize(
    "text, phrase",
    [
        ("Let me search the codebase for the handler.", "let me search"),
        ("I'll read the file to confirm.", "i'll read"),
        ("OK, I will check the logs now.", "i will check"),
        ("I'm going to run the tests.", "i'm going to run"),
        ("Now let's look at the config.", "let's look at"),
        ("我来查一下这个函数的定义。", "我来查"),
        ("好的，让我先读取配置文件。", "让我先读"),
        ("接下来我运行测试。", "接下来我运行"),
        ("The answer is 42.", None),
        ("Let me explain how it works: I'll read the docs later.", None),
        ("Let me know if you want me to check anything else.", None),
        ("让我解释一下：我来查询数据库。", None),
        ('The user wrote "let me search the web" in the prompt.', None),
        ("Type `let me check` to trigger it.", None),
        ("```\n# let me search the index\nsearch()\n```\nDone.", None),
        ("    let me run the script  # indented code\nAll done.", None),
        ("> I'll fetch the page\nThat is what the bot said.", None),
        ("「我来查一下」是他说的。", None),
        ("Done. I'll update the docs too if you want.", None),
        ("Shall I go ahead? I'll run the migrations then.", None),
        ("修复完成。需要我来运行一次测试吗？", None),
    ],
)
def test_tool_intent_phrases(text, phrase):
    assert tool_intent_phrase(text) == phrase


def said(text: str) -> list[dict]:
    return turn({"type": "content", "text": text}, reason="stop")


AGENT_START = turn(call("ls", path="."), result(output="a.py"))
INTENT = "tool_intent_without_call"


@pytest.mark.parametrize(
    "replies, expected",
    [
        (1, [(INTENT, 1, 1, 1, 1, "nudge")]),
        (2, [(INTENT, 1, 1, 1, 1, "nudge"), (INTENT, 1, 1, 1, 2, "nudge")]),
        (4, [(INTENT, 1, 1, 1, 1, "nudge"), (INTENT, 1, 1, 1, 2, "nudge")]),
    ],
)
def test_at_most_2_nudges_in_a_row_then_give_up(replies, expected):
    events = AGENT_START + said("Let me search for the definition.") * replies
    assert run(only("tool_intent"), events) == expected


def test_the_nudge_limit_is_configurable():
    events = AGENT_START + said("Let me search for it.") * 4
    assert [d[4] for d in run(only("tool_intent", max_nudges=3), events)] == [1, 2, 3]


def test_a_reply_without_intent_ends_the_streak():
    events = AGENT_START + said("I'll check it.") * 2 + said("Here is the answer.") + said("I'll check it.")
    assert [d[4] for d in run(only("tool_intent"), events)] == [1, 2, 1]


def test_a_tool_call_ends_the_streak():
    events = AGENT_START + said("I'll check it.") * 2 + turn(call("grep", q="x"), result()) + said("I'll check it.")
    assert [(d[1], d[4]) for d in run(only("tool_intent"), events)] == [(1, 1), (1, 2), (2, 1)]


def test_a_turn_with_a_tool_call_is_not_nudged():
    events = AGENT_START + turn({"type": "content", "text": "Let me search."}, call("grep", q="x"), result())
    assert run(only("tool_intent"), events) == []


def test_a_stream_without_tools_is_not_nudged():
    assert run(only("tool_intent"), said("Let me search for it.")) == []
    found = run(only("tool_intent", require_prior_tool_call=False), said("Let me search for it."))
    assert found == [(INTENT, 0, 0, 0, 1, "nudge")]


def test_the_reply_is_judged_whole_across_deltas():
    deltas = [{"type": "content", "text": piece} for piece in ("Let me s", "ea", "rch the logs.")]
    (found,) = detections(only("tool_intent"), AGENT_START + turn(*deltas, reason="stop"))
    assert found.unit == "let me search"
    assert found.extra == {"notice": NOTICES[INTENT]}


def test_a_reply_without_finish_is_judged_at_the_next_turn():
    events = AGENT_START + [{"type": "turn"}, {"type": "content", "text": "I'll read the file."}, {"type": "turn"}]
    assert run(only("tool_intent"), events) == [(INTENT, 1, 1, 1, 1, "nudge")]


def test_long_replies_and_cut_replies_are_not_judged():
    long = "I'll read the file. " + "Details. " * 30
    assert run(only("tool_intent", max_text_chars=200), AGENT_START + said(long)) == []
    assert (
        run(only("tool_intent"), AGENT_START + turn({"type": "content", "text": "I'll read it"}, reason="length")) == []
    )


def test_the_reply_buffer_is_bounded():
    monitor = only("tool_intent", max_text_chars=200)
    # The second chunk makes the monitor hand the first on (it holds text
    # for whole-text readers up to HELD_TEXT_CHARS).
    chunks = [{"type": "content", "text": "I'll read it. " + "x" * 10_000}, {"type": "content", "text": "x"}]
    run(monitor, AGENT_START + [{"type": "turn"}, *chunks])
    (detector,) = monitor.detectors
    assert sum(len(part) for part in detector.parts) == 201
    assert run(monitor, [{"type": "finish", "reason": "stop"}]) == []
