"""What every tool-call detector shares, written once: the canonical call key,
the per-tool allowlist, `ToolCallDetector` (keys each call and pairs each
result with its call), the error streak, the escalation check of params,
and the constructor of `tools`/`session` detections.

A call key is the tool name plus its arguments as canonical JSON (keys
sorted, no whitespace), with configured fields (timestamps, request ids)
dropped at any depth, so `{"b": 1, "a": 2}` and `{ "a":2,"b":1 }` are the
same call. Keys are compared by a 64-bit digest; only a short display text is
kept, so a detector remembering 100 keys holds a few kilobytes.

Cost: a key is O(size of the arguments) to build; pairing a result is O(1)
by order and O(pending) by id, with at most `PENDING_LIMIT` calls pending.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .base import Detector, StreamContext
from .detection import Detection
from .params import ConfigError, param
from .tool_messages import message_for

UNIT_CHARS = 160
PENDING_LIMIT = 100

# None by default: a field such as `timestamp` is noise in one tool and the
# whole point of another (scheduling); profiles name the ones to drop.
DEFAULT_IGNORED_FIELDS: list[str] = []
# Tools that legitimately repeat the same call: polling and waiting, and the
# debugger's stepping commands, whose result changes although the call does not.
DEFAULT_ALLOWLIST = [
    "*poll*",
    "wait",
    "wait_*",
    "*_wait",
    "sleep",
    "next",
    "step",
    "step_*",
    "*_next",
    "*_step",
    "continue",
]


@dataclass(frozen=True)
class ToolKeyParams:
    """The parameters every tool-call detector takes; detectors' `Params` extend it."""

    ignored_fields: list = param(
        DEFAULT_IGNORED_FIELDS, tune=False, doc="argument fields (at any depth) left out of the call key"
    )
    allowlist: list = param(
        DEFAULT_ALLOWLIST, tune=False, doc="tool-name globs exempt from repetition rules (polling, debugger steps)"
    )

    def __post_init__(self) -> None:
        for name in ("ignored_fields", "allowlist"):
            if not all(isinstance(item, str) for item in getattr(self, name)):
                raise ConfigError(f"{name}: expected a list of strings")


def check_ladder(first: str, first_at: int, then: str, then_at: int) -> None:
    """A rule's escalation must come after its first threshold (0: off)."""
    if first_at and then_at and then_at <= first_at:
        raise ConfigError(f"{then}: {then_at} must be above {first} {first_at} (or 0: off)")


@dataclass(frozen=True, slots=True)
class CallKey:
    """A tool call's identity: `digest` compares, `text` is what detections show."""

    name: str
    digest: str
    text: str


def _without(value: Any, ignored: frozenset) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [_without(v, ignored) for v in value]
    return value


def canonical_args(args: Any, ignored_fields: frozenset = frozenset()) -> str:
    """Arguments as canonical JSON: key order and whitespace do not matter.

    >>> canonical_args({"b": 1, "a": {"y": 2, "ts": 5}}, frozenset({"ts"}))
    '{"a":{"y":2},"b":1}'
    """
    return json.dumps(
        _without(args, ignored_fields), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def call_key(event: dict, ignored_fields: frozenset = frozenset()) -> CallKey:
    """The key of a `tool_call` event.

    >>> a = call_key({"type": "tool_call", "name": "ls", "args": {"path": ".", "all": True}})
    >>> b = call_key({"type": "tool_call", "name": "ls", "args": {"all": True, "path": "."}})
    >>> a == b, a.text
    (True, 'ls({"all":true,"path":"."})')
    """
    name = event["name"]
    args = canonical_args(event.get("args") or {}, ignored_fields)
    text = f"{name}({args})"
    if len(text) > UNIT_CHARS:
        text = text[: UNIT_CHARS - 1] + "…"
    return CallKey(name, digest(name + "\x00" + args), text)


def result_digest(event: dict) -> str:
    """What a `tool_result` returned, as a digest: success flag and output."""
    return digest(f"{event.get('ok')}\x00{event.get('output') or ''}")


def failed(event: dict) -> bool:
    """A result counts as failed only when it says so (`ok` is false)."""
    return event.get("ok") is False


def allowlisted(name: str, globs: list) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in globs)


class PendingCalls:
    """Calls waiting for their result. A `tool_result` with an `id` goes to
    the call with that id; one without goes to the oldest pending call.
    Holds at most `PENDING_LIMIT` calls (the oldest are forgotten)."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: OrderedDict[int, tuple[CallKey, str | None]] = OrderedDict()

    def add(self, index: int, key: CallKey, call_id: str | None) -> None:
        self._calls[index] = (key, call_id)
        if len(self._calls) > PENDING_LIMIT:
            self._calls.popitem(last=False)

    def take(self, result: dict) -> tuple[int, CallKey] | None:
        """The (index, key) of the call `result` answers, removed from the pending set."""
        if not self._calls:
            return None
        result_id = result.get("id")
        if result_id is not None:
            for index, (key, call_id) in self._calls.items():
                if call_id == result_id:
                    del self._calls[index]
                    return index, key
            if any(call_id is not None for _, call_id in self._calls.values()):
                return None  # answers a call no longer pending
        index, (key, _) = self._calls.popitem(last=False)
        return index, key

    def clear(self) -> None:
        self._calls.clear()


class ToolCallDetector(Detector):
    """Base of the detectors that work on call keys: it keys every call,
    pairs every result with its call, and hands them on as
    `on_call(key, event, ctx)` and `on_result(index, key, event, ctx)`;
    other events go to `on_event`. Allowlisted calls are keyed and paired
    too (so results without ids stay in step) and `exempt(key)` tells them
    apart. A new request (`turn`, `user`) drops the calls still waiting.
    `Params` must extend `ToolKeyParams`."""

    # on_event sees only these unless a subclass widens the set.
    consumes = frozenset({"tool_call", "tool_result", "turn", "user"})

    def __init__(self, params: Any = None):
        super().__init__(params)
        self.ignored = frozenset(self.params.ignored_fields)
        self.pending = PendingCalls()

    def exempt(self, key: CallKey) -> bool:
        return allowlisted(key.name, self.params.allowlist)

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "tool_call":
            key = call_key(event, self.ignored)
            self.pending.add(ctx.tool_calls, key, event.get("id"))
            return self.on_call(key, event, ctx)
        if kind == "tool_result":
            taken = self.pending.take(event)
            return [] if taken is None else self.on_result(taken[0], taken[1], event, ctx)
        if kind in ("turn", "user"):
            self.pending.clear()  # a new request: results of calls still waiting never came
        return self.on_event(event, ctx)

    def on_call(self, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        raise NotImplementedError

    def on_result(self, index: int, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        return []

    def on_event(self, event: dict, ctx: StreamContext) -> list[Detection]:
        return []


def calls_read(event: dict | None, ctx: StreamContext) -> int:
    """`at` for the tools channel: tool calls read once this event (None: a
    clock tick with no event) is taken in."""
    return ctx.tool_calls + (1 if event is not None and event["type"] == "tool_call" else 0)


def tools_detection(
    detector: str,
    kind: str,
    event: dict | None,
    ctx: StreamContext,
    *,
    start: int,
    end: int,
    unit: str,
    period: int,
    repeats: int,
    action: str,
    extra: dict | None = None,
    channel: str = "tools",
) -> Detection:
    """A detection on the tools (or session) channel, `at` and the message filled in."""
    return Detection(
        detector=detector,
        type=kind,
        channel=channel,
        start=start,
        end=end,
        at=calls_read(event, ctx),
        unit=unit,
        period=period,
        repeats=repeats,
        action=action,
        message=message_for(kind, unit=unit, repeats=repeats, period=period, **(extra or {})),
        turn=ctx.turn,
        extra=extra or {},
    )


class ErrorStreak:
    """Consecutive failed tool results: a failure adds one, a success
    (`ok: true`) ends the streak, a result that does not say leaves it.
    `start` is the tool calls read at the streak's first failure."""

    __slots__ = ("count", "start")

    def __init__(self) -> None:
        self.count = 0
        self.start = 0

    def update(self, event: dict, ctx: StreamContext) -> int:
        if failed(event):
            if not self.count:
                self.start = ctx.tool_calls
            self.count += 1
        elif event.get("ok") is True:
            self.count = 0
        return self.count
