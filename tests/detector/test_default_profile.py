"""The default profile's text-loop detector (`detector.text_loop`): exact
detections on loop shapes, silence on legitimate repetition, thresholds,
one report per loop, turns, bounded state.

Real text comes from fixtures/corpus/real_small.jsonl.gz, read by row id.
"""

from __future__ import annotations

import gc
import json
import random
from collections import deque
from dataclasses import replace

import pytest

from detector import Monitor
from detector.config import Profile, get_profile
from detector.params import param_specs
from detector.text_blocks import CODE_LINE_CHARS, PRINTED_LITERALS, RAW
from detector.text_loop import TextLoopDetector, TextLoopParams
from tests.shared_paths import shared_path

DEFAULT_TEXT_LOOP = get_profile("default").detectors["text_loop"]


def _rows() -> dict[str, dict]:
    with shared_path("corpus", "real_small.jsonl").open(encoding="utf-8") as corpus:
        rows = [json.loads(line) for line in corpus]
    return {row["id"]: row for row in rows}


ROWS = _rows()


def detect(text: str, channel: str = "content", chunk: int = 4, params: TextLoopParams = DEFAULT_TEXT_LOOP) -> list:
    """The text_loop detections on `text`, fed in `chunk`-character deltas
    after a turn and followed by a finish."""
    monitor = Monitor(Profile("text_loop_only", {"text_loop": params}))
    found = monitor.feed({"type": "turn"})
    for i in range(0, len(text), chunk):
        found += monitor.feed({"type": channel, "text": text[i : i + chunk]})
    found += monitor.feed({"type": "finish"})
    return found


def summary(detection) -> tuple:
    return (detection.type, detection.start, detection.end, detection.at, detection.period, detection.repeats)


# (name, text, expected (type, start, end, at, period, repeats), expected unit)
LOOP_SHAPES = [
    # A loop is found where its evidence is complete, not at the next check
    # every 32 characters: a 2-character unit with two letters at its 20th copy.
    ("chinese short unit", "我需要" + "思考" * 40, ("short_unit", 3, 43, 43, 2, 20), "思考"),
    ("hahaha", "He laughed: " + "ha" * 50, ("short_unit", 12, 52, 52, 2, 20), "ha"),
    ("2-character word with comma", "对，" * 30, ("short_unit", 0, 40, 40, 2, 20), "对，"),
    (
        "sentence without newline",
        "Let me think. " + "I need to analyze this problem. " * 10,
        ("short_unit", 12, 140, 140, 32, 4),  # four copies: 12 + 4 x 32
        ". I need to analyze this problem",
    ),
    (
        "chinese sentences (seed 000 type 1)",
        "好的。" + "今天天气真好。我们出去玩吧！" * 8,
        ("short_unit", 3, 59, 59, 14, 4),
        "今天天气真好。我们出去玩吧！",
    ),
    (
        "numbered list, numbers climbing (seed 000 type 2)",
        "".join(f"{i}. {'分析需求' if i % 2 else '设计方案'}\n" for i in range(1, 31)),
        ("block_cycle", 0, 153, 153, 16, 9),
        "1. 分析需求\n2. 设计方案\n",
    ),
    (
        "numbered english list",
        "Plan:\n"
        + "".join(f"{i}. {'Analyze the requirements' if i % 2 else 'Design the solution'}\n" for i in range(1, 31)),
        ("block_cycle", 6, 187, 187, 51, 3),
        "1. Analyze the requirements\n2. Design the solution\n",
    ),
    (
        "Episode N counter",
        "".join(f"Episode {i}: The Rings of Power. " for i in range(1, 30)),
        ("counter_cycle", 0, 165, 166, 31, 5),
        "Episode 1: The Rings of Power. ",
    ),
    (
        "columnN counter",
        "SELECT " + "".join(f"column{i}, " for i in range(1, 60)),
        ("counter_cycle", 16, 167, 168, 9, 16),
        "column2, ",
    ),
    (
        "n-ball counter, two numbers stepping together",
        "".join(f"In {i}-ball, the player must sink the {i}-ball last.\n" for i in range(8, 20)),
        ("counter_cycle", 0, 250, 251, 49, 5),
        "In 8-ball, the player must sink the 8-ball last.\n",
    ),
    (
        "bullet pair",
        "Ideas:\n" + "* The nuclear fusion submarine carrier\n* The nuclear fusion aircraft carrier\n" * 5,
        # Two copies and half a third (its first line): 2 x 77 + 39 characters,
        # from the line break before the first copy (the character-level check
        # sees this rotation, a character before the block check's copies).
        ("short_unit", 6, 199, 199, 77, 2),
        "\n* The nuclear fusion submarine carrier\n* The nuclear fusion aircraft carrier",
    ),
    (
        "table row",
        "| Topic | Count |\n|---|---|\n" + "| Merchant Navy Careers in Transportation | 1 |\n" * 8,
        # One line: two copies and at most 160 characters of more: 26 + 2 x 96.
        ("short_unit", 26, 218, 218, 48, 4),
        "|\n| Merchant Navy Careers in Transportation | 1 ",
    ),
    (
        "code line",
        "function f() {\n" + "  retry(fetchConfig(url, { timeout: 5000, retries: 3 }));\n" * 6,
        ("short_unit", 14, 246, 246, 58, 4),  # one line: 14 + 4 x 58
        "\n  retry(fetchConfig(url, { timeout: 5000, retries: 3 }));",
    ),
    (
        "yaml step",
        "steps:\n" + "  - name: Deploy\n    uses: actions/deploy@v1\n    with:\n      host: ${{ secrets.HOST }}\n" * 4,
        # The character-level check sees it first (its run starts at the line
        # break before the first step): 6 + 2 x 87 + 44 = 224 characters.
        ("short_unit", 6, 224, 224, 87, 2),
        "\n  - name: Deploy\n    uses: actions/deploy@v1\n    with:\n      host: ${{ secrets.HOST }}",
    ),
    (
        "paragraph",
        "Intro.\n\n"
        + (
            "Alternatively, maybe the man can use the dragon to his advantage. If he goes into the dragon room,"
            " he can defeat the dragon, but that is not escaping the room.\n\n"
        )
        * 3,
        # Two copies and half a third: 5 + 2 x 161 + 81 = 408 characters.
        ("short_unit", 5, 408, 408, 161, 2),
        ".\n\nAlternatively, maybe the man can use the dragon to his advantage. If he goes into the dragon room,"
        " he can defeat the dragon, but that is not escaping the room",
    ),
    ("padding of one character", "Result:\n" + "-" * 300, ("short_unit", 8, 128, 128, 1, 120), "-"),
]


@pytest.mark.parametrize(("name", "text", "expected", "unit"), LOOP_SHAPES, ids=[case[0] for case in LOOP_SHAPES])
def test_each_loop_shape_is_found_once_with_its_region(name, text, expected, unit):
    (found,) = detect(text)
    assert found.detector == "text_loop"
    assert found.channel == "content"
    assert summary(found) == expected
    assert found.unit == unit
    assert text[found.start : found.start + found.period] == unit
    assert found.action == "stop"


def test_a_detection_explains_itself():
    (found,) = detect("我需要" + "思考" * 40)
    assert found.message == "the same 2-character phrase repeated 20 times since offset 3"
    (found,) = detect("".join(f"Episode {i}: The Rings of Power. " for i in range(1, 30)))
    assert found.message == (
        "the same 31-character passage (2 sentences or lines), its numbers counting up, repeated 5 times since offset 0"
    )


# Real loops (content and reasoning): the detector reports the labelled unit
# from the labelled start, shortly after the loop began.
REAL_LOOPS_FROM_LABEL = [
    ("ae-qwen14b-zh-word", "short_unit", 4, 42),
    ("ae-qwen15-72b-zh-phrase", "short_unit", 5, 40),
    ("gh-llamafactory-5026-dui", "short_unit", 2, 40),
    ("gh-qwen3omni-4-zh-think-b-run", "short_unit", 2, 40),
    # A copy under 300 characters is a loop halfway into its third copy, not
    # at its second: 2 x 67 + 34 characters.
    ("gh-vscode-280585-gemini3-narration", "short_unit", 67, 168),
    ("gh-vllm-25977-qwen3-boxed", "short_unit", 135, 338),
    ("ae-guanaco13b-n-ball", "counter_cycle", 132, 659),
]


def test_a_one_block_passage_reads_simply():
    (found,) = detect("Plan:\n" + "".join(f"{i}. Agile\n" for i in range(1, 40)))
    assert found.message == "the same 9-character passage repeated 16 times since offset 6"


@pytest.mark.parametrize(("row_id", "kind", "period", "delay"), REAL_LOOPS_FROM_LABEL)
def test_real_loops_are_found_from_their_labelled_start(row_id, kind, period, delay):
    row = ROWS[row_id]
    first = detect(row["text"], channel=row["channel"])[0]
    assert (first.type, first.start, first.period, first.unit) == (kind, row["loop_start"], period, row["loop_unit"])
    assert first.at - row["loop_start"] == delay


@pytest.mark.parametrize(
    ("row_id", "expected"),
    [
        # The periodic run reaches back a character or two before the labelled
        # start (" I know, I know", "|\n|         |"): the unit is a rotation.
        ("ae-xwinlm7b-i-know", ("short_unit", 80, 120, 120, 8, 5)),
        ("ae-llama31-8b-one-by", ("short_unit", 2305, 2347, 2347, 7, 6)),
        # A letter-free row (an ASCII wall) is held to a grid's length: 32 rows.
        ("ae-chatglm2-ascii-wall", ("short_unit", 94, 478, 478, 12, 32)),
        # A line of 83 characters: the character-level check sees the rotation
        # that starts a few characters early, and fires two copies and 160
        # characters of a third in.
        ("ae-qwen15-1.8b-table-row", ("short_unit", 2664, 2990, 2990, 83, 3)),
        ("ae-phi2-cat-sentences", ("short_unit", 150, 358, 358, 83, 2)),
        ("tli-r1llama8b-comma-000", ("short_unit", 858, 978, 978, 4, 30)),
        ("gh-localai-969-mpt7b-greeting", ("short_unit", 108, 300, 300, 48, 4)),
        # Copies that end in a line break, seen from the break before the first.
        ("ae-ghost7b-bullet-pair", ("short_unit", 986, 1179, 1179, 77, 2)),
        ("tli-r1qwen1.5b-para-pair-loop", ("short_unit", 1654, 2510, 2510, 428, 2)),
        # Counted copies start where the blocks first agree: after '"Episode 1:' and 'SELECT column1,'.
        ("ae-internlm2-episode-n", ("counter_cycle", 12, 186, 187, 31, 5)),
        ("ae-phi2-columnN", ("counter_cycle", 16, 167, 168, 9, 16)),
        # Two workflow steps already repeated before the labelled one-step loop.
        ("ae-llama31-8b-yaml-step", ("block_cycle", 2510, 3304, 3305, 401, 2)),
    ],
)
def test_real_loops_found_with_a_shifted_start(row_id, expected):
    row = ROWS[row_id]
    first = detect(row["text"], channel=row["channel"])[0]
    assert summary(first) == expected
    assert row["text"][first.start : first.start + first.period] == first.unit


def _normal_text_rows() -> list[str]:
    return [row_id for row_id, row in ROWS.items() if row["label"] == "normal" and row["channel"] != "tool_calls"]


@pytest.mark.parametrize("row_id", _normal_text_rows())
def test_real_normal_outputs_stay_quiet(row_id):
    """Markdown tables, code, Sudoku grids, YAML, repeated headings, "Wait,"
    restarts, documents: every normal text row of the corpus."""
    row = ROWS[row_id]
    assert detect(row["text"], channel=row["channel"]) == []


LEGITIMATE = [
    ("ascii box", "+" + "-" * 40 + "+\n" + ("|" + " " * 40 + "|\n") * 12 + "+" + "-" * 40 + "+\n"),
    ("ascii border line", "=" * 100 + "\nTitle\n" + "=" * 100 + "\n"),
    (
        "comment dividers around a blank line",
        "# " + "-" * 77 + "\n\n# " + "-" * 77 + "\n# Imports\n# " + "-" * 77 + "\n",
    ),
    ("markdown table with equal rows", "| Feature | A | B |\n|---|---|---|\n" + "| Support | ✓ | ✓ |\n" * 3),
    # Three copies of a short line (four are a loop, below).
    ("code with a repeated line", "def f():\n" + "    print('-' * 40)\n" * 3 + "    return 1\n"),
    ("code line said three times", "  retry(fetchConfig(url, { timeout: 5000, retries: 3 }));\n" * 3 + "}\n"),
    ("wait self-checks", "Wait, let me check. 3 + 4 = 7. Wait, is that right? Yes. Wait, what about 5? 5 + 2 = 7.\n"),
    ("enumeration of numbers", ", ".join(str(i) for i in range(1, 120)) + "\n"),
    ("multiplication table", "".join(f"56 x {i} = {56 * i}\n\n" for i in range(1, 13))),
    ("zero array", "matrix = [" + ", ".join(["0"] * 40) + "]\n"),
    (
        "repeated headings",
        "".join(f"## Example\n\nThis is example number {w}.\n\n" for w in ["one", "two", "three", "four", "five"]),
    ),
    (
        "template placeholders",
        "".join(f"- **[Feature {i}]:** [Brief description of the feature]\n" for i in range(1, 5)),
    ),
    ("laughter", "哈哈哈，太好笑了。hahaha, that is funny!"),
    ("one by one", "Check the files one by one by one, then stop."),
    ("wait twice", "Wait, Wait, I see."),
]


@pytest.mark.parametrize(("name", "text"), LEGITIMATE, ids=[case[0] for case in LEGITIMATE])
def test_legitimate_repetition_stays_quiet(name, text):
    assert detect(text) == []


PASSAGE = (
    "The quick brown fox jumps over the lazy dog while the farmer counts his sheep, the baker bakes bread for"
    " the village, the river runs past the mill and the children play by the old oak tree near the church until"
    " the bells ring at noon and everyone goes home for lunch with their families and friends who came from far."
)


# Thresholds: "思考" (2 letters a copy) needs 20 copies (40 characters, 20
# letters); a sentence needs 2 copies and half a third (and 160 characters
# in all as blocks), 2 copies from 300 characters on (a shorter one said
# twice is a slip, below).
@pytest.mark.parametrize(
    ("text", "fires"),
    [
        ("思考" * 20, True),
        ("思考" * 19, False),
        ("ab" * 20, True),
        ("ab" * 19, False),
        ("-" * 120, True),
        ("-" * 119, False),
        ("Z" * 119 + "! ", False),
        # A short line needs four copies (`line_min_copies`), found at the
        # fourth's end whatever comes before it: no longer only when a check
        # every 32 characters happened to fall inside the run.
        *[("#" * k + "\ndef f():\n" + "    print('-' * 40)\n" * 4 + "    return 1\n", True) for k in range(32)],
        ("def f():\n" + "    print('-' * 40)\n" * 3 + "    return 1\n", False),
        # A letter-free line with a number is a grid's row: 32 copies, however many blank lines come between.
        (("[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n\n") * 32, True),
        (("[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n\n") * 31, False),
        # One with no number holds no data (a divider): the evidence of letter-free copies.
        (("# " + "-" * 77 + "\n\n") * 4, True),
        (("# " + "-" * 77 + "\n\n") * 3, False),
        ("This sentence is exactly eighty characters long, counting every space in it ok. " * 2, False),
        ("This sentence is exactly eighty characters long, counting every space in it ok. " * 3, True),
        ("Fifty characters long, this sentence is, no more. " * 2, False),
        ("Fifty characters long, this sentence is, no more. " * 3, True),
        ((PASSAGE[:298] + ". ") * 2, True),
        ((PASSAGE[:297] + ". ") * 2, False),
    ],
)
def test_thresholds(text, fires):
    assert bool(detect(text)) is fires


# Evidence is copies times their length: a copy under 300 characters said
# twice is a slip, but once the run goes on halfway into a third copy (at
# most 160 characters, what a loop of short copies must cover) it is a
# loop. A passage of five sentences (232 characters):
MEETING = (
    "The committee met again on Monday to review it. Every member read the same report twice over. "
    "They agreed that the budget needed more time. Nobody wanted to vote before the next meeting. "
    "So the chair closed the session before noon. "
)
# One line of 169 characters, cut into blocks at its commas.
DEVIATION = (
    "Squared differences, then the mean of them, then the square root of that mean, give the standard"
    " deviation of the sample, which we report for each group of values here.\n"
)


def test_a_copy_under_two_copy_chars_fires_once_half_its_third_copy_is_there():
    # Two copies and two sentences (94 characters) of a third: quiet; so is
    # a cut at 115 characters, one short of half the copy.
    assert detect(MEETING * 2 + MEETING[:94] + "Then we all went home for good.") == []
    assert detect(MEETING * 2 + MEETING[:115] + "Then we all went home for good.") == []
    # Half the copy, cut in mid-sentence or not: caught right there, at
    # 2 x 232 + 116 = 580 characters (a check that saw the run under way asks
    # for the next one there), 116 before the copy ends.
    for cut in (116, 140):
        (found,) = detect(MEETING * 2 + MEETING[:cut] + "Then we all went home for good.")
        assert (found.type, found.start, found.at, found.period, found.repeats) == ("short_unit", 0, 580, 232, 2)


def test_a_long_line_needs_a_region_of_its_third_copy_not_four_copies():
    # A line under 300 characters needed four copies (code and tables repeat
    # a line now and then); by evidence, 2 x 169 + 160 = 498 characters do.
    text = "Intro line.\n" + DEVIATION * 2
    assert detect(text + DEVIATION[:100] + "\nDone.") == []
    (found,) = detect(text + DEVIATION * 2)
    # (The run reaches back to "e.\n" of "line.\n", as the copy ends in "here.\n": 9 + 498.)
    assert (found.type, found.start, found.at, found.period, found.repeats) == ("short_unit", 9, 507, 169, 2)
    assert found.at < 12 + 3 * len(DEVIATION) == 519


def test_one_report_per_loop_and_a_new_loop_fires_again():
    text = "思考" * 100 + "Now something else entirely, then. " + "hello " * 30
    found = detect(text)
    assert [(d.type, d.start, d.unit) for d in found] == [("short_unit", 0, "思考"), ("short_unit", 234, " hello")]


def test_both_channels_are_watched_and_positions_continue_across_turns():
    monitor = Monitor(Profile("text_loop_only", {"text_loop": DEFAULT_TEXT_LOOP}))
    found = monitor.feed({"type": "turn"})
    found += monitor.feed({"type": "reasoning", "text": "Hmm. " + "思考" * 30})
    found += monitor.feed({"type": "turn"})
    found += monitor.feed({"type": "content", "text": "ok " * 40})
    assert [(d.channel, d.type, d.start, d.unit, d.turn) for d in found] == [
        ("reasoning", "short_unit", 5, "思考", 1),
        ("content", "short_unit", 0, "ok ", 2),
    ]


def test_a_loop_does_not_span_a_turn():
    """Each turn holds 15 copies of a 2-character unit: under the 20 needed."""
    monitor = Monitor(Profile("text_loop_only", {"text_loop": DEFAULT_TEXT_LOOP}))
    found = []
    for _ in range(4):
        found += monitor.feed({"type": "turn"})
        found += monitor.feed({"type": "content", "text": "思考" * 15})
    assert found == []


@pytest.mark.parametrize(("name", "text", "expected", "unit"), LOOP_SHAPES, ids=[case[0] for case in LOOP_SHAPES])
def test_split_invariance(name, text, expected, unit):
    whole = detect(text, chunk=len(text))
    assert detect(text, chunk=1) == whole
    rng = random.Random(name)
    monitor = Monitor(Profile("text_loop_only", {"text_loop": DEFAULT_TEXT_LOOP}))
    found, i = monitor.feed({"type": "turn"}), 0
    while i < len(text):
        step = rng.randint(1, 40)
        found += monitor.feed({"type": "content", "text": text[i : i + step]})
        i += step
    found += monitor.feed({"type": "finish"})
    assert found == whole


# Pieces of numbered lists and the marks around them: every way a list
# number, its dot, a newline, a lead of blank lines, a mark or a weak cut
# can meet a chunk's edge.
LIST_TOKENS = ["1", "12", "3", "5", "a", "I", "iv", ".", ". ", "e.g.", ",", ", ", "。", " ", "  ", "\n", "\n\n"]
LIST_TOKENS += ["Agile", "x"]
LIST_TOKENS += ["lorem ipsum dolor sit amet "] * 4  # long blocks, cut where they pass `block_weak_cut_chars`


@pytest.mark.parametrize("seed", range(30))
def test_numbered_lists_cut_into_the_same_blocks_however_split(seed):
    """A chunk that only goes on with a list number takes a shortcut past
    the boundary scan; it must cut exactly the blocks the scan cuts."""
    rng = random.Random(seed)
    text = "".join(rng.choice(LIST_TOKENS) for _ in range(400))
    text += "".join(f"{n}. Agile\n" for n in range(1, 30))  # and a loop, so regions are compared too
    whole = _blocks(text, [text])
    assert any(kind == "block_cycle" for kind, *_ in whole[1])
    for size in (1, 2, 3, 4, 5, 7):
        assert _blocks(text, [text[i : i + size] for i in range(0, len(text), size)]) == whole, size
    pieces, i = [], 0
    while i < len(text):
        step = rng.randint(1, 12)
        pieces.append(text[i : i + step])
        i += step
    assert _blocks(text, pieces) == whole


def test_a_numbered_line_longer_than_a_weak_cut_in_one_chunk_is_cut_as_ever():
    line = "12. " + "lorem ipsum dolor sit amet " * 5
    text = "Intro.\n" + line + "\n"
    pieces = ["Intro.\n", line, "\n"]
    blocks, _ = _blocks(text, pieces)
    assert blocks == _blocks(text, list(text))[0]
    cut = line.index(" ", 80)  # the first space 80 visible characters into the block
    assert [block[RAW] for block in blocks] == ["Intro.", "\n" + line[:cut], line[cut:] + "\n"]


def test_the_garbage_collector_stops_tracking_the_blocks_a_finder_keeps():
    """A live server keeps every open session's rings of blocks: they must
    not add to what each full collection walks."""
    text = "".join(f"{n}. Agile and lean, said twice.\n" for n in range(1, 200))
    blocks, regions = _blocks(text, [text[i : i + 16] for i in range(0, len(text), 16)])
    assert len(blocks) == 2 * 199 and regions  # "n. Agile and lean," and " said twice.\n"
    gc.collect()
    assert [block for block in blocks if gc.is_tracked(block)] == []


def _blocks(text: str, pieces: list[str]) -> tuple[list, list]:
    """Every block the finder cut (start, text, lead, body) and every region it reported."""
    finder = TextLoopDetector()._channels["content"].blocks
    finder._ring = deque(maxlen=None)  # keep every block, to compare them all
    regions, offset = [], 0
    for piece in pieces:
        regions += finder.feed(piece, offset)
        offset += len(piece)
    regions += finder.flush(offset)
    return list(finder._ring), [(r.kind, r.start, r.end, r.at, r.unit, r.repeats) for r in regions]


def test_state_stays_bounded_on_a_long_stream():
    monitor = Monitor(Profile("text_loop_only", {"text_loop": DEFAULT_TEXT_LOOP}))
    (detector,) = monitor.detectors
    text = ROWS["doc-alpaca-eval-readme"]["text"]
    for _ in range(3):
        for i in range(0, len(text), 4):
            monitor.feed({"type": "content", "text": text[i : i + 4]})
    finders = detector._channels["content"]
    params = detector.params
    # The window is the tail of a string cut back to it once twice as long;
    # 250,000 characters fill the ring.
    assert finders.units.window_chars <= len(finders.units._text) <= 2 * finders.units.window_chars
    assert len("".join(finders.blocks._pending)) <= 2 * params.block_max_chars
    assert len(finders.blocks._ring) == finders.blocks._ring.maxlen


def test_the_strings_a_code_block_prints_are_bounded():
    # A minified line of 200,000 characters and 300 lines printing a string
    # each: the line under way is kept as its tail, the strings are the
    # latest PRINTED_LITERALS.
    monitor = Monitor(Profile("text_loop_only", {"text_loop": DEFAULT_TEXT_LOOP}))
    (detector,) = monitor.detectors
    minified = "var a=1, b=2; " * 14_300
    prints = "".join(f'print("Report line {n}, done")\n' for n in range(300))
    text = "```js\n" + minified + "\n" + prints + minified
    longest = 0
    for i in range(0, len(text), 64):
        monitor.feed({"type": "content", "text": text[i : i + 64]})
        longest = max(longest, len("".join(detector._channels["content"].blocks._code_line)))
    blocks = detector._channels["content"].blocks
    assert longest <= CODE_LINE_CHARS + DEFAULT_TEXT_LOOP.block_max_chars
    assert list(blocks._printed) == [f"Report line {n}, done" for n in range(300 - PRINTED_LITERALS, 300)]


def test_parameters_are_declared_for_the_tuner():
    specs = {spec.name: spec for spec in param_specs(TextLoopParams)}
    assert "action" not in specs
    assert all(spec.low is not None and spec.high is not None and spec.step for spec in specs.values())
    assert specs["block_region_chars"].default == 160


def test_profiles_enable_it():
    assert "text_loop" in get_profile("default").detectors
    assert "text_loop" in get_profile("preview").detectors
    assert "text_loop" not in get_profile("seed000").detectors
    assert "text_loop" not in get_profile("gemini").detectors


def test_action_is_configurable():
    (found,) = detect("思考" * 40, params=replace(DEFAULT_TEXT_LOOP, action="warn"))
    assert found.action == "warn"
