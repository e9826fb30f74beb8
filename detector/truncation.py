"""Truncated tool calls (seed 001): a request that ends with `finish` reason
`length` after making tool calls was cut off while writing them, so their
arguments are likely incomplete and the calls are discarded.

Each such turn fires `truncated_tool_calls` with the discarded calls as the
region: a nudge (the model is told to try another approach) until the count
reaches `force_text_at` (3), then force_text. As in the seed the count is
cumulative: a text reply does not reset it, only a turn whose tool calls
went through (finished for another reason) does. Cost per event O(1);
memory O(1) (the tool names shown are capped).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .params import action_param, param
from .tool_keys import UNIT_CHARS, tools_detection
from .tool_messages import NOTICES


@dataclass(frozen=True)
class TruncationParams:
    force_text_at: int = param(3, low=1, high=10, step=1, doc="truncated tool-call turns that take the tools away")
    action: str = action_param("nudge", doc="action below force_text_at")
    force_text_action: str = action_param("force_text")


class Truncation(Detector):
    name = "truncation"
    Params = TruncationParams
    builtin = {"default": {}}
    consumes = frozenset({"turn", "tool_call", "finish"})

    def __init__(self, params: TruncationParams | None = None):
        super().__init__(params)
        self.count = 0
        self._new_turn(0)

    def _new_turn(self, first_call: int) -> None:
        self.first_call = first_call
        self.names: list[str] = []
        self.names_chars = 0

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "turn":
            self._new_turn(ctx.tool_calls)
        elif kind == "tool_call":
            if self.names_chars < UNIT_CHARS:
                self.names.append(event["name"])
                self.names_chars += len(event["name"]) + 2
        elif kind == "finish":
            calls = ctx.tool_calls - self.first_call
            first, names = self.first_call, self.names
            self._new_turn(ctx.tool_calls)
            if not calls:
                return []
            if event.get("reason") != "length":
                self.count = 0
                return []
            self.count += 1
            p = self.params
            action = p.force_text_action if self.count >= p.force_text_at else p.action
            detection = tools_detection(
                self.name,
                "truncated_tool_calls",
                event,
                ctx,
                start=first,
                end=ctx.tool_calls,
                unit=", ".join(names),
                period=calls,
                repeats=self.count,
                action=action,
                extra={"notice": NOTICES["truncated_tool_calls"]},
            )
            return [detection]
        return []
