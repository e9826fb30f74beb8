"""Tool-call dedup (seed 003, layer 2): a call already made, not necessarily
just before, whose earlier result could be reused.

An LRU of the last `cache_size` (100) call keys remembers, per key, the
latest call's index, its result and how many times the call was made since
that result last changed. A call repeating a remembered key fires
`duplicate_tool_call` (naming the earlier call in `extra["earlier"]`) once
it has been made `min_occurrences` times, unless it directly follows the
same call (a run in a row is `tool_repetition`'s). A result that differs
from the remembered one means the tool is not deterministic here (tests
after an edit, a status that moved on): the count starts again. A failed
result is not reusable and is forgotten (`repeated_failure` covers
retries). Allowlisted tools are not remembered.

Cost per event O(1) plus the call key (O(pending) to pair a result by id);
memory O(cache_size) keys.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from .base import StreamContext
from .detection import Detection
from .params import action_param, param
from .tool_keys import CallKey, ToolCallDetector, ToolKeyParams, failed, result_digest, tools_detection


@dataclass(frozen=True)
class ToolDedupParams(ToolKeyParams):
    cache_size: int = param(
        100, low=10, high=1000, step=10, doc="call keys remembered (least recently made forgotten first)"
    )
    min_occurrences: int = param(
        3, low=2, high=10, step=1, doc="times a call is made, with an unchanged result, before it fires"
    )
    action: str = action_param("warn")


@dataclass(slots=True)
class _Seen:
    index: int  # the latest call with this key
    count: int  # calls since the result last changed
    result: str | None  # digest of the latest result, None before one arrives


class ToolDedup(ToolCallDetector):
    name = "tool_dedup"
    Params = ToolDedupParams
    builtin = {"default": {}}

    def __init__(self, params: ToolDedupParams | None = None):
        super().__init__(params)
        self.seen: OrderedDict[str, _Seen] = OrderedDict()
        self.previous: str | None = None  # digest of the call just before

    def on_call(self, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        p = self.params
        index = ctx.tool_calls
        if self.exempt(key):
            self.previous = None
            return []
        in_a_row, self.previous = self.previous == key.digest, key.digest
        seen = self.seen.get(key.digest)
        if seen is None:
            self.seen[key.digest] = _Seen(index, 1, None)
            if len(self.seen) > p.cache_size:
                self.seen.popitem(last=False)
            return []
        self.seen.move_to_end(key.digest)
        earlier, seen.index = seen.index, index
        seen.count += 1
        if seen.count < p.min_occurrences or in_a_row:
            return []
        detection = tools_detection(
            self.name,
            "duplicate_tool_call",
            event,
            ctx,
            start=earlier,
            end=index + 1,
            unit=key.text,
            period=index - earlier,
            repeats=seen.count,
            action=p.action,
            extra={"earlier": earlier},
        )
        return [detection]

    def on_result(self, index: int, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        seen = self.seen.get(key.digest)
        if seen is None:
            return []
        if failed(event):
            del self.seen[key.digest]
            return []
        outcome = result_digest(event)
        if seen.result is not None and outcome != seen.result:
            seen.count = 1
        seen.result = outcome
        return []
