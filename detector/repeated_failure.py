"""Repeated failure (seed 003, layer 3: failure records): a call whose key
has already failed is made again.

Failures are remembered per call key, with how many times the key failed,
in an LRU of `cache_size` keys; a success of the key clears its record (the
operation works now). A call whose key has failed `min_failures` times or
more fires `repeated_failure`, naming the last failed call in
`extra["failed_at"]`. Allowlisted tools are not recorded.

Cost per event O(1) plus the call key (O(pending) to pair a result by id);
memory O(cache_size) keys.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from .base import StreamContext
from .detection import Detection
from .params import action_param, param
from .tool_keys import CallKey, ToolCallDetector, ToolKeyParams, failed, tools_detection


@dataclass(frozen=True)
class RepeatedFailureParams(ToolKeyParams):
    cache_size: int = param(100, low=10, high=1000, step=10, doc="failed call keys remembered")
    min_failures: int = param(2, low=1, high=10, step=1, doc="failures of a call before making it again fires")
    action: str = action_param("warn")


@dataclass(slots=True)
class _Failure:
    first: int  # index of the first failed call
    last: int  # index of the latest failed call
    count: int


class RepeatedFailure(ToolCallDetector):
    name = "repeated_failure"
    Params = RepeatedFailureParams
    builtin = {"default": {}}

    def __init__(self, params: RepeatedFailureParams | None = None):
        super().__init__(params)
        self.failures: OrderedDict[str, _Failure] = OrderedDict()

    def on_call(self, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        p = self.params
        if self.exempt(key):
            return []
        failure = self.failures.get(key.digest)
        if failure is None or failure.count < p.min_failures:
            return []
        detection = tools_detection(
            self.name,
            "repeated_failure",
            event,
            ctx,
            start=failure.first,
            end=ctx.tool_calls + 1,
            unit=key.text,
            period=1,
            repeats=failure.count,
            action=p.action,
            extra={"failed_at": failure.last},
        )
        return [detection]

    def on_result(self, index: int, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        if self.exempt(key):
            return []
        if event.get("ok") is True:
            self.failures.pop(key.digest, None)
        elif failed(event):
            failure = self.failures.get(key.digest)
            if failure is None:
                self.failures[key.digest] = _Failure(index, index, 1)
                if len(self.failures) > self.params.cache_size:
                    self.failures.popitem(last=False)
            else:
                failure.last, failure.count = index, failure.count + 1
                self.failures.move_to_end(key.digest)
        return []
