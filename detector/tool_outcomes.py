"""Identical failing batches (seed 001's DuplicateToolCallTracker).

A batch is the tool calls the model made together: those of one turn, or,
in a stream without `turn` events, the calls up to the next result. Its
fingerprint is the ordered list of its call keys. A batch counts only when
every call in it failed (`ok: false`); the same fingerprint failing again
adds one, a new failing fingerprint starts at 1, and anything else (a call
that succeeded or never reported, a text reply, a user message) resets the
count to 0. At `warn_at` (2) the detection asks to warn the model, from
`force_text_at` (4) to take its tools away; as in the seed it fires for
every counted batch from `warn_at` on, the notice for the model in
`extra["notice"]`.

The other outcome rule, the same call with the same result (a loop) or a
new one (polling, pagination: not a loop, up to the polling cap), lives in
`tool_repetition`, with the run of calls it restarts.

It fires on the result that completes the batch. Cost per event O(1) plus
the call key (O(pending) to pair a result by id); memory O(batch), a batch
of more than 100 calls is not followed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import StreamContext
from .detection import Detection
from .params import ConfigError, action_param, param
from .tool_keys import PENDING_LIMIT, CallKey, ToolCallDetector, ToolKeyParams, failed, tools_detection
from .tool_messages import NOTICES

UNIT_SEPARATOR = " + "


@dataclass(frozen=True)
class ToolOutcomesParams(ToolKeyParams):
    warn_at: int = param(2, low=2, high=10, step=1, doc="identical all-failed batches in a row that warn")
    warn_action: str = action_param("warn")
    force_text_at: int = param(
        4, low=2, high=20, step=1, doc="identical all-failed batches in a row that take the tools away"
    )
    force_text_action: str = action_param("force_text")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.force_text_at < self.warn_at:
            raise ConfigError(f"force_text_at: {self.force_text_at} is below warn_at {self.warn_at}")


class ToolOutcomes(ToolCallDetector):
    name = "tool_outcomes"
    Params = ToolOutcomesParams
    builtin = {"default": {}}
    consumes = frozenset({"tool_call", "tool_result", "turn", "user", "content", "finish"})
    reads_text_whole = True  # only whether a turn said anything

    def __init__(self, params: ToolOutcomesParams | None = None):
        super().__init__(params)
        self.count = 0
        self.fingerprint: tuple[str, ...] = ()
        self.run_start = 0
        self.turn_calls = 0
        self.turn_text = False
        self._new_batch()

    def _new_batch(self) -> None:
        self.batch: list[tuple[int, str, str]] = []  # (index, digest, text) per call
        self.outcomes: dict[int, bool] = {}  # call index -> failed
        self.has_exempt = False
        self.answered = False

    def _reset(self) -> None:
        self.count = 0
        self.fingerprint = ()

    def on_event(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "content":
            self.turn_text = self.turn_text or bool(event["text"].strip())
        elif kind == "finish":
            self._end_turn()
        elif kind in ("turn", "user"):
            self._end_turn()
            if self.batch and len(self.outcomes) < len(self.batch):
                self._reset()  # a batch that never fully reported is no evidence of a loop
            if kind == "user":
                self._reset()
            self._new_batch()
            self.turn_calls, self.turn_text = 0, False
        return []

    def _end_turn(self) -> None:
        # A text reply (a turn with text and no tool call) ends the streak, as in the seed.
        if self.turn_text and not self.turn_calls:
            self._reset()

    def on_call(self, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        if self.answered:
            self._new_batch()
        self.turn_calls += 1
        if len(self.batch) >= PENDING_LIMIT:
            self.has_exempt = True  # too big to follow: its oldest calls are no longer paired
            return []
        self.batch.append((ctx.tool_calls, key.digest, key.text))
        self.has_exempt = self.has_exempt or self.exempt(key)
        return []

    def on_result(self, index: int, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        if not self.batch or not self.batch[0][0] <= index <= self.batch[-1][0]:
            return []
        self.answered = True
        self.outcomes[index] = failed(event)
        if len(self.outcomes) < len(self.batch):
            return []
        return self._batch_done(event, ctx)

    def _batch_done(self, event: dict, ctx: StreamContext) -> list[Detection]:
        p = self.params
        if self.has_exempt or not all(self.outcomes.values()):
            self._reset()
            return []
        fingerprint = tuple(digest for _, digest, _ in self.batch)
        if fingerprint == self.fingerprint:
            self.count += 1
        else:
            self.fingerprint, self.count, self.run_start = fingerprint, 1, self.batch[0][0]
        if self.count < p.warn_at:
            return []
        action = p.force_text_action if self.count >= p.force_text_at else p.warn_action
        unit = UNIT_SEPARATOR.join(text for _, _, text in self.batch)
        detection = tools_detection(
            self.name,
            "repeated_failing_batch",
            event,
            ctx,
            start=self.run_start,
            end=self.batch[-1][0] + 1,
            unit=unit,
            period=len(self.batch),
            repeats=self.count,
            action=action,
            extra={"notice": NOTICES["repeated_failing_batch"]},
        )
        return [detection]
