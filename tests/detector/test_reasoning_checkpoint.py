"""Seed 000's checkpoint detector (profile `seed000`): every case of the
seed's §7.1 and its worked examples (§2.3, §2.4), with exact positions.

Layout of the test texts: `filler(n)` is n random lowercase letters (no
separator, no newline, no repeated unit), so the only loops are the ones a
test puts in. Type 3 reads [1800, 2000); types 1 and 2 read [2000, 3000) and
then [3000, 5000). `in_range(r)` builds a 3000-character reasoning text
whose [2000, 3000) range ends with `r`, preceded by a distinct padding block
that ends in a newline.
"""

from __future__ import annotations

import random
import string

import pytest

from detector import Checkpoint, Monitor, Profile
from detector.params import ConfigError, build_params
from detector.period import PeriodRun, find_period
from detector.reasoning_checkpoint import ORDERED_LIST, PARAGRAPH, SHORT_UNIT, Params

NAME = "reasoning_checkpoint"


def filler(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def in_range(tail: str, low: int = 2000, high: int = 3000) -> str:
    """A reasoning text of `high` characters whose range [low, high) ends with `tail`."""
    pad = high - low - len(tail) - 1
    assert pad >= 1
    return filler(low) + filler(pad, seed=1) + "\n" + tail


def run(text: str, chunk: int | None = None, events: list[dict] | None = None, **overrides):
    """Feed `text` as reasoning (whole, or in `chunk`-character pieces) to a
    profile holding only this detector; return (detections, checkpoints)."""
    params = build_params(Params, overrides, "test")
    monitor = Monitor(Profile("test", {NAME: params}))
    found = []
    for event in events or []:
        found += monitor.feed(event)
    step = chunk or max(len(text), 1)
    for i in range(0, len(text), step):
        found += monitor.feed({"type": "reasoning", "text": text[i : i + step]})
    return found, monitor.take_checkpoints()


def detect(text: str, **overrides):
    """The detections, after checking that 7-character chunks give the same."""
    found, checkpoints = run(text, **overrides)
    assert run(text, chunk=7, **overrides) == (found, checkpoints)
    return found


def one(text: str, **overrides):
    found = detect(text, **overrides)
    assert len(found) == 1, found
    return found[0]


def cp(point, start, end, check, result=""):
    return Checkpoint(NAME, "reasoning", point, start, end, check, result)


# ---- type 3: short-unit loops, regex on [1800, 2000) ----


def test_type3_detects_short_unit_loop():
    d = one(filler(1900) + "思考" * 100)
    assert (d.type, d.start, d.end, d.at, d.unit, d.period, d.repeats) == (SHORT_UNIT, 1900, 2000, 2000, "思考", 2, 50)
    assert (d.detector, d.channel, d.action, d.turn) == (NAME, "reasoning", "stop", 0)
    assert d.message.startswith("the same 2-character unit '思考' repeated 50 times since offset 1,900")


def test_type3_exactly_four_copies_fire():
    d = one(filler(1992) + "思考" * 4)
    assert (d.start, d.end, d.repeats) == (1992, 2000, 4)


def test_type3_three_copies_stay_quiet():
    found, checkpoints = run(filler(1994) + "思考" * 3)
    assert found == []
    assert checkpoints == [cp(2000, 1800, 2000, SHORT_UNIT)]


def test_type3_copies_past_the_checkpoint_are_not_seen():
    # three copies before 2000, forty after: the window ends at the checkpoint
    assert detect(filler(1994) + "思考" * 43 + filler(3000, seed=2)[:1006]) == []


@pytest.mark.parametrize("run_", ["。" * 7, "." * 5, "啊" * 7])
def test_type3_single_character_runs_under_eight_stay_quiet(run_):
    assert detect(filler(2000 - len(run_)) + run_) == []


def test_type3_eight_of_one_character_are_four_two_character_units():
    # The seed's regex (.{2,}?)\1{3,} reads "哈哈哈哈哈哈哈哈" as "哈哈" x 4: the
    # minimum unit of 2 only protects runs shorter than 8.
    d = one(filler(1992) + "哈" * 8)
    assert (d.start, d.unit, d.repeats) == (1992, "哈哈", 4)


def test_type3_normal_repetition_haha_stays_quiet():
    assert detect(filler(1900) + "哈哈哈，" + filler(96, seed=3)) == []


def test_type3_unit_does_not_cross_a_newline():
    assert detect(filler(1992) + "a\n" * 4) == []


def test_type3_longest_unit_is_a_quarter_of_the_window():
    unit = filler(50, seed=4)
    assert one(filler(1800) + unit * 4).unit == unit
    assert detect(filler(1796) + filler(51, seed=4) * 4) == []


# ---- type 1: paragraph loops (blocks) on [2000, 3000) ----

SENTENCE = "我需要分析这个问题。"  # 10 characters


def test_type1_sentence_loop_without_newlines():
    d = one(filler(2000) + SENTENCE * 100)
    assert (d.type, d.start, d.end, d.at) == (PARAGRAPH, 2000, 2999, 3000)
    assert (d.unit, d.period, d.repeats, d.extra) == (SENTENCE, 10, 100, {"checkpoint": 3000, "elements": 1})
    assert d.message.startswith("the same 1-block passage (10 characters, '我需要分析这个问题。') repeated 100 times")


def test_type1_paragraph_loop_with_newlines():
    para = "We check the input first. Then we compare both halves\n"
    text = in_range(para * 8)
    d = one(text)
    first = 3000 - 8 * len(para)
    assert (d.type, d.start, d.end, d.unit, d.repeats) == (PARAGRAPH, first, 2999, para, 8)
    assert d.extra["elements"] == 2


@pytest.mark.parametrize(
    ("copies", "fires"),
    [(6, True), (5, False)],
    ids=["six-blocks-fire", "five-blocks-quiet"],
)
def test_type1_threshold_six_blocks(copies, fires):
    found, checkpoints = run(in_range(SENTENCE * copies))
    assert bool(found) == fires
    result = PARAGRAPH if fires else ""
    assert checkpoints[:2] == [cp(2000, 1800, 2000, SHORT_UNIT), cp(3000, 2000, 3000, PARAGRAPH, result)]
    if fires:
        assert (found[0].start, found[0].repeats) == (3000 - 6 * len(SENTENCE), 6)
        assert len(checkpoints) == 2  # the first loop ends the turn's checking


def test_type1_period_two_at_and_under_threshold():
    pair = "先读题。再作答！"
    assert one(in_range(pair * 3)).repeats == 3  # 6 blocks, period 2
    assert detect(in_range(pair * 2 + "先读题。")) == []  # 5 blocks


def test_type1_every_separator_ends_a_block():
    text = in_range("".join("我们走吧" + sep for sep in "。.；;！!？?\n"))
    d = one(text)
    assert (d.start, d.end, d.unit, d.repeats) == (3000 - 45, 2999, "我们走吧。", 9)


def test_type1_loop_not_ending_at_the_checkpoint_is_not_seen():
    # 14-character sentences: the range's last block is cut at 3000 (and at
    # 5000) and the tail check compares it with a whole block (the design,
    # kept). A cut just before the separator would still match.
    sentence = "这个问题我需要再仔细想一想。"
    assert len(sentence) == 14 and 1000 % 14 == 6 and 3000 % 14 == 4
    text = filler(2000) + sentence * 400
    assert detect(text[:5000]) == []
    assert one(filler(2000) + sentence[8:] + sentence * 400).at == 3000  # 1000 = 6 + 71 * 14


def test_type1_normal_enumeration_stays_quiet():
    text = in_range("首先，分析需求。其次，设计方案。然后，实现代码。最后，测试验证。再回头检查一遍。得出结论。")
    assert detect(text) == []


# ---- type 2: ordered-list loops (lines, numbers stripped) ----


def numbered(items: list[str], first: int = 1) -> str:
    return "".join(f"{n}. {item}\n" for n, item in enumerate(items, first))


def test_type2_ordered_list_loop():
    lines = numbered(["分析需求", "设计方案"] * 4)
    d = one(in_range(lines))
    assert (d.type, d.start, d.end, d.at) == (ORDERED_LIST, 3000 - len(lines), 2999, 3000)
    assert (d.unit, d.period, d.repeats, d.extra["elements"]) == ("1. 分析需求\n2. 设计方案\n", 16, 4, 2)


def test_type2_climbing_numbers_same_content():
    lines = numbered(["检查这一步"] * 10)
    d = one(in_range(lines))
    assert (d.type, d.unit, d.repeats, d.extra["elements"]) == (ORDERED_LIST, "1. 检查这一步\n", 10, 1)
    found, checkpoints = run(in_range(lines))
    assert checkpoints[1:] == [
        cp(3000, 2000, 3000, PARAGRAPH),
        cp(3000, 2000, 3000, ORDERED_LIST, ORDERED_LIST),
    ]


@pytest.mark.parametrize(("lines", "fires"), [(6, True), (5, False)], ids=["six-lines-fire", "five-lines-quiet"])
def test_type2_threshold_six_lines(lines, fires):
    found = detect(in_range(numbered(["检查这一步"] * lines)))
    assert [d.type for d in found] == ([ORDERED_LIST] if fires else [])


def test_type2_number_formats_are_stripped():
    lines = "9. 检查\n10. 检查\n11. 检查\n99. 检查\n100. 检查\n101. 检查\n"
    d = one(in_range(lines))
    assert (d.start, d.repeats) == (3000 - len(lines), 6)


def test_type2_other_number_formats_follow_the_pattern_parameter():
    lines = "".join(f"{n}) 检查\n" for n in range(1, 7))
    assert detect(in_range(lines)) == []
    d = one(in_range(lines), list_number_pattern=r"\d+[.)]\s")
    assert (d.type, d.repeats) == (ORDERED_LIST, 6)


def test_type2_normal_list_stays_quiet():
    lines = numbered(["分析需求", "设计方案", "实现代码", "编写测试", "部署上线", "监控指标", "复盘"])
    assert detect(in_range(lines)) == []


# ---- the seed's worked examples ----


def test_example_2_3_period_finder():
    # §2.3: ["A","B","A","B","A","B"], period 2, "4 consecutive repeats meet
    # the threshold": 4 matches span 6 elements, which is the threshold 6.
    assert find_period(["A", "B", "A", "B", "A", "B"], 50, 6) == PeriodRun(period=2, length=6)


def test_example_2_4_type3():
    d = one(filler(1992) + "思考思考思考思考")
    assert (d.unit, d.repeats) == ("思考", 4)


def test_example_2_4_type1_needs_min_elements_4():
    # §2.4 says its 4 blocks "meet the threshold", which contradicts the
    # threshold of 6: with 6 it stays quiet; with min_elements = 4, as the
    # example assumes, it fires.
    example = "今天天气真好。我们出去玩吧！今天天气真好。我们出去玩吧！"
    assert detect(in_range(example)) == []
    d = one(in_range(example), min_elements=4)
    assert (d.start, d.end, d.unit, d.repeats) == (2972, 2999, "今天天气真好。我们出去玩吧！", 2)


def test_example_2_4_type2():
    example = "1. 分析需求\n2. 设计方案\n3. 分析需求\n4. 设计方案\n5. 分析需求\n6. 设计方案"
    d = one(in_range(example))
    assert (d.type, d.start, d.end, d.repeats) == (ORDERED_LIST, 3000 - len(example), 3000, 3)


# ---- boundaries ----


def test_checkpoints_fire_when_reached_not_before():
    text = filler(5000)
    assert run(text[:1999])[1] == []
    assert run(text[:2000])[1] == [cp(2000, 1800, 2000, SHORT_UNIT)]
    assert len(run(text[:2999])[1]) == 1
    assert len(run(text[:3000])[1]) == 3
    assert len(run(text[:4999])[1]) == 3


def test_one_chunk_over_every_checkpoint_evaluates_each_in_order():
    found, checkpoints = run(filler(5000))
    assert found == []
    assert checkpoints == [
        cp(2000, 1800, 2000, SHORT_UNIT),
        cp(3000, 2000, 3000, PARAGRAPH),
        cp(3000, 2000, 3000, ORDERED_LIST),
        cp(5000, 3000, 5000, PARAGRAPH),
        cp(5000, 3000, 5000, ORDERED_LIST),
    ]


def test_tail_recheck_at_5000():
    text = filler(3000) + SENTENCE * 200
    found, checkpoints = run(text)
    assert [(d.type, d.start, d.end, d.at, d.repeats) for d in found] == [(PARAGRAPH, 3000, 4999, 5000, 200)]
    assert checkpoints[-1] == cp(5000, 3000, 5000, PARAGRAPH, PARAGRAPH)


def test_empty_text():
    assert run("") == ([], [])
    found, checkpoints = run("", events=[{"type": "reasoning", "text": ""}] * 3)
    assert (found, checkpoints) == ([], [])


def test_very_short_text_is_never_checked():
    assert run("思考思考思考思考思考思考") == ([], [])


def test_very_long_loop_after_5000_is_not_seen_and_text_is_not_kept():
    monitor = Monitor("seed000")
    text = filler(5000) + "思考" * 50_000
    for i in range(0, len(text), 1000):
        assert monitor.feed({"type": "reasoning", "text": text[i : i + 1000]}) == []
    (detector,) = monitor.detectors
    assert detector._parts == []  # nothing kept after the last checkpoint


def test_checkpoints_count_per_turn_in_session_offsets():
    events = [{"type": "turn"}, {"type": "reasoning", "text": filler(2500, seed=5)}, {"type": "turn"}]
    found, checkpoints = run(filler(1900) + "思考" * 100, events=events)
    assert [(d.start, d.end, d.at, d.turn, d.extra["checkpoint"]) for d in found] == [(4400, 4500, 4500, 2, 2000)]
    assert checkpoints == [
        Checkpoint(NAME, "reasoning", 2000, 1800, 2000, SHORT_UNIT, "", 1),
        Checkpoint(NAME, "reasoning", 2000, 4300, 4500, SHORT_UNIT, SHORT_UNIT, 2),
    ]


def test_content_channel_is_not_read():
    monitor = Monitor("seed000")
    assert monitor.feed({"type": "content", "text": filler(1900) + "思考" * 100}) == []
    assert monitor.take_checkpoints() == []


# ---- false positives ----


def test_repetition_in_the_prompt_region_is_not_seen():
    text = filler(100) + "思考" * 100 + filler(1700, seed=6) + filler(3000, seed=7)
    assert detect(text) == []


def test_code_block_with_nested_closers_stays_quiet():
    code = "```js\nfunction f(a) {\n  if (a) {\n    while (a) {\n      a--;\n    }\n  }\n  return a;\n}\n```\n"
    assert detect(in_range(code)) == []


def test_code_block_with_identical_lines_fires():
    # The seed leaves code blocks unhandled (its option 3): six identical
    # lines at the end of the range are a loop to it.
    code = "```\n" + 'print("-")\n' * 6
    d = one(in_range(code))
    assert (d.type, d.unit, d.repeats) == (PARAGRAPH, 'print("-")\n', 6)


def test_lines_differing_only_in_whitespace_stay_quiet():
    lines = "".join(" " * i + "- 检查输入\n" for i in range(8))
    assert detect(in_range(lines)) == []


def test_table_separator_row_in_the_short_window_fires():
    # A known false positive of the design: "|---" four times is a unit.
    d = one(filler(1983) + "|---|---|---|---|")
    assert (d.start, d.unit, d.repeats) == (1983, "|---", 4)


def test_normal_emphasis_and_enumeration_stay_quiet():
    text = filler(1850) + "非常非常重要，very, very, very careful; 一、二、三、四、五。" + filler(3000, seed=8)
    assert detect(text[:5000]) == []


# ---- parameters ----


def test_every_parameter_is_honoured():
    text = filler(900) + "思考" * 20 + filler(100, seed=9)
    assert detect(text) == []
    d = one(text, checkpoints=[1040, 1500], short_window=150, min_repeats=20, action="warn")
    assert (d.start, d.end, d.at, d.repeats, d.action) == (900, 940, 1040, 20, "warn")
    assert detect(text, checkpoints=[1040], short_window=100) == []  # the window starts after the loop
    wider = one(text, checkpoints=[1040], short_window=150, min_unit=3)
    assert (wider.unit, wider.repeats) == ("思考思考", 10)
    assert one(filler(2000) + "好。" * 600, separators="。").type == PARAGRAPH
    assert detect(filler(2000) + "好!" * 600, separators="。") == []
    assert detect(in_range("先读题。再作答！" * 3), max_period=1) == []
    assert detect(in_range("先读题。" * 7), min_elements=8) == []
    assert one(in_range("先读题。" * 8), min_elements=8).repeats == 8


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"checkpoints": [3000, 2000]}, "test.checkpoints: must increase"),
        ({"checkpoints": []}, "test.checkpoints: expected a list of positive whole numbers"),
        ({"checkpoints": ["2000"]}, "test.checkpoints: expected a list of positive whole numbers"),
        ({"list_number_pattern": "("}, "test.list_number_pattern: not a regular expression"),
        ({"separators": ""}, "test.separators: expected at least one character"),
        ({"min_repeats": 1}, "test.min_repeats: 1 is below the minimum 2"),
    ],
)
def test_bad_parameters_name_the_key(values, message):
    with pytest.raises(ConfigError) as err:
        build_params(Params, values, "test")
    assert str(err.value).startswith(message)
