"""Gemini CLI's content-chanting check (profile `gemini`): thresholds, every
reset trigger, code blocks, the history cap, exact positions.

`SENTENCE` is 46 characters with no Markdown marker: repeated from offset
s, its first 50-character window recurs every 46 characters, so the 10th
occurrence completes at s + 9 * 46 + 50 = s + 464.
"""

from __future__ import annotations

import random
import string

import pytest

from detector import Monitor, Profile
from detector import content_chanting as chanting
from detector.content_chanting import TYPE, Params
from detector.params import build_params

NAME = "content_chanting"
SENTENCE = "I know the answer is here and I will find it. "


def letters(n: int, seed: int = 0) -> str:
    """n random lowercase letters and spaces: no marker, no repeated window."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_lowercase + "  ") for _ in range(n))


def monitor(**overrides) -> Monitor:
    return Monitor(Profile("test", {NAME: build_params(Params, overrides, "test")}))


def feed(events: list[dict], chunk: int = 4, **overrides):
    """Detections of `events`, content/reasoning text split in `chunk`s."""
    m = monitor(**overrides)
    found = []
    for event in events:
        if event["type"] in ("content", "reasoning"):
            text = event["text"]
            for i in range(0, len(text), chunk):
                found += m.feed({"type": event["type"], "text": text[i : i + chunk]})
        else:
            found += m.feed(event)
    return found


def scan(text: str, **overrides):
    """Detections of `text` as content, after checking that whole, one
    character at a time and 4-character chunks agree."""
    events = [{"type": "content", "text": text}]
    found = feed(events, **overrides)
    assert feed(events, chunk=1, **overrides) == found
    assert feed(events, chunk=max(len(text), 1), **overrides) == found
    return found


def fires_at(text: str, **overrides) -> int | None:
    found = scan(text, **overrides)
    assert len(found) <= 1
    return found[0].at if found else None


def test_sentence_loop_fields():
    (d,) = scan("Intro:\n" + SENTENCE * 30)
    assert (d.detector, d.type, d.channel, d.action) == (NAME, TYPE, "content", "stop")
    assert (d.start, d.end, d.at, d.unit, d.period, d.repeats) == (7, 471, 471, SENTENCE, 46, 10)
    assert d.extra == {"mean_gap": 46.0, "distinct_periods": 1}
    assert d.message.startswith("the same 50-character text appeared 10 times within 464 characters (mean gap 46)")


def test_ninth_occurrence_is_quiet_tenth_fires():
    text = "Intro:\n" + SENTENCE * 30
    assert fires_at(text[: 7 + 463]) is None
    assert fires_at(text[: 7 + 464]) == 471


@pytest.mark.parametrize(("period", "at"), [(250, 9 * 250 + 50), (251, None)])
def test_mean_gap_250_fires_251_does_not(period, at):
    assert fires_at(letters(period) * 12) == at


def test_distinct_periods_at_most_five():
    # items sharing a 50-character prefix, the text between two occurrences
    # of the prefix taking 5 (loop) or 6 (list of distinct items) values
    prefix = "Next we look at the value stored in the cache for "
    assert len(prefix) == 50

    def items(variants: int) -> str:
        return "".join(prefix + f"key{'abcdef'[i % variants]} today. " for i in range(12))

    item = len(prefix) + len("keya today. ")
    assert fires_at(items(5)) == 9 * item + 50
    assert fires_at(items(6)) is None


@pytest.mark.parametrize(
    "marker",
    ["- ", "* ", "+ ", "  - ", "1. ", "12. ", "# ", "### ", "> ", "| cell | ", "|---", "+--"],
)
def test_every_markdown_line_start_resets(marker):
    lines = "".join(marker + SENTENCE + "\n" for _ in range(30))
    assert scan(lines) == []
    assert len(scan("".join("x " + SENTENCE + "\n" for _ in range(30)))) == 1


def test_dash_bullets_reset_unlike_the_original_class():
    # The original's [*-+] is the range "*".."+": "- " never reset there.
    assert scan("".join("- " + SENTENCE * 2 + "\n" for _ in range(10))) == []


def test_reset_starts_tracking_after_the_marker():
    text = "- item\n" + SENTENCE * 30
    assert fires_at(text) == 7 + 464
    # a marker-like character mid-line is not a line start
    assert fires_at("see - it:" + SENTENCE * 30) == 9 + 464


def test_divider_line_resets_and_is_not_tracked():
    assert scan("=" * 300 + "\n") == []
    assert scan("─" * 300) == []
    assert fires_at("x" * 300) == 59  # 10 windows of "x" * 50, one apart
    # a loop broken by divider lines every 8 copies never reaches 10
    assert scan(("Intro\n" + SENTENCE * 8 + "\n=====\n") * 5) == []


def test_line_starting_like_a_divider_is_tracked():
    text = "**" + SENTENCE * 30
    assert fires_at(text) == 2 + 464


def test_code_block_is_not_tracked():
    loop = SENTENCE * 30
    assert scan("```python\n" + loop + "\n```") == []
    closing = len("```python\n" + loop + "\n```")
    assert fires_at("```python\n" + loop + "\n```" + loop) == closing + 464
    # a fence anywhere in a line counts, and backticks split over events too
    text = "see ``` " + loop
    assert scan(text) == []
    assert feed([{"type": "content", "text": text}], chunk=1) == []


def test_history_cap():
    unit = letters(200, seed=1)
    assert fires_at(unit * 12) == 9 * 200 + 50
    # 10 occurrences span 1850 characters: a 1800-character history forgets the first
    assert fires_at(unit * 12, history=1800) is None
    assert fires_at(unit * 12, history=1850) == 9 * 200 + 50


def test_memory_stays_bounded_on_a_long_stream():
    m = monitor()
    text = letters(200_000, seed=2)
    for i in range(0, len(text), 4):
        assert m.feed({"type": "content", "text": text[i : i + 4]}) == []
    (detector,) = m.detectors
    assert len(detector._buf) <= 2 * 5000
    assert len(detector._windows) <= 5000
    assert sum(1 if isinstance(starts, int) else len(starts) for starts in detector._index.values()) <= 5000


def test_hash_collisions_are_checked_against_the_text(monkeypatch):
    # With every window colliding, only windows equal to the first one are
    # recorded (as in the original): a loop from offset 0 is still seen, a
    # loop after an intro is not.
    monkeypatch.setattr(chanting, "hash", lambda _: 0, raising=False)
    assert fires_at(SENTENCE * 30) == 464
    assert fires_at("Intro:\n" + SENTENCE * 30) is None


def test_tool_call_resets_tracking():
    nine = SENTENCE * 9 + SENTENCE[:49]
    events = [{"type": "content", "text": nine}, {"type": "tool_call", "name": "ls", "args": {}}]
    assert feed(events + [{"type": "content", "text": SENTENCE * 9}]) == []
    assert len(feed([{"type": "content", "text": nine}, {"type": "content", "text": SENTENCE * 9}])) == 1


def test_turn_resets_and_reenables_after_a_detection():
    events = [
        {"type": "turn"},
        {"type": "content", "text": SENTENCE * 30},
        {"type": "content", "text": SENTENCE * 30},
        {"type": "turn"},
        {"type": "content", "text": SENTENCE * 30},
    ]
    found = feed(events)
    assert [(d.turn, d.start, d.at) for d in found] == [(1, 0, 464), (2, 2760, 2760 + 464)]


def test_turn_closes_an_open_code_block():
    events = [{"type": "content", "text": "```\n"}, {"type": "turn"}, {"type": "content", "text": SENTENCE * 30}]
    assert [d.at for d in feed(events)] == [4 + 464]


def test_reasoning_channel_only_when_asked():
    events = [{"type": "reasoning", "text": SENTENCE * 30}]
    assert feed(events) == []
    (d,) = feed(events, channel="reasoning")
    assert (d.channel, d.at) == ("reasoning", 464)


def test_parameters_change_the_thresholds():
    assert fires_at(SENTENCE * 30, min_occurrences=5) == 4 * 46 + 50
    assert fires_at(letters(300) * 12, max_mean_gap=300) == 9 * 300 + 50
    assert fires_at(SENTENCE * 30, chunk_size=20) == 9 * 46 + 20
    (d,) = scan(SENTENCE * 30, action="warn")
    assert d.action == "warn"
