"""Tool-call repetition (seeds 002 and 004): the same call again and again.

Rules, each firing once when its count reaches a threshold (and once more
at its escalation threshold):

- `consecutive_identical_tool_calls`: the same call key (name + canonical
  arguments, `tool_keys`) several times in a row. Seed 002 counts 5 and
  seed 004 10 regardless of results; here, by default, a call whose result
  differs from the previous identical call's starts a new run, because the
  same call with a new result (pagination, a job's progress) is not stuck.
  `new_result_restarts = false` gives the seeds' plain count.
- `tool_polling_cap`: the same call in a row whose result keeps changing
  (polling) is still cut off at a separate, higher cap.
- `tool_call_cycle`: a cycle of 2 to `cycle_max_period` calls (A,B,A,B...)
  repeated `cycle_repeats` times, found with the shared `PeriodTracker`.
- `repeated_tool_name` (seed 004's preview strict mode): for models matching
  `strict_models`, calls are counted by tool name only since the last user
  message: `strict_intensive_threshold` (4) for the intensive tools,
  `strict_other_threshold` (5) for the others (names compared without case
  or separators, so kimi-cli's `ReadFile` is `read_file`).

Allowlisted tools (polling, debugger steps) break runs and are not counted.
A user message starts everything afresh. Cost per event O(cycle_max_period)
plus the call key; memory O(cycle_max_period + pending calls + distinct tool
names, at most 1,000).
"""

from __future__ import annotations

import fnmatch
from collections import deque
from dataclasses import dataclass

from .base import StreamContext
from .detection import Detection
from .params import ConfigError, action_param, param
from .period import PeriodTracker
from .tool_keys import CallKey, ToolCallDetector, ToolKeyParams, check_ladder, result_digest, tools_detection

NAMES_LIMIT = 1000  # distinct tool names counted in strict mode
INTENSIVE_TOOLS = ["read_file", "read_many_files", "glob", "search_file_content", "ls"]


@dataclass(frozen=True)
class ToolRepetitionParams(ToolKeyParams):
    consecutive_threshold: int = param(3, low=2, high=20, step=1, doc="identical calls in a row that fire (0: off)")
    consecutive_action: str = action_param("warn")
    consecutive_escalation: int = param(
        10, low=0, high=50, step=1, doc="identical calls in a row that fire again (0: off)"
    )
    consecutive_escalation_action: str = action_param("stop")
    new_result_restarts: bool = param(
        True, doc="a call whose result differs from the previous identical call's starts a new run"
    )
    polling_cap: int = param(
        30, low=0, high=200, step=5, doc="identical calls in a row with changing results that fire (0: off)"
    )
    polling_action: str = action_param("warn")
    cycle_max_period: int = param(5, low=2, high=5, step=1, doc="longest cycle of calls looked for")
    cycle_repeats: int = param(3, low=0, high=10, step=1, doc="rounds of a cycle that fire (below 2: off)")
    cycle_action: str = action_param("warn")
    cycle_escalation: int = param(5, low=0, high=20, step=1, doc="rounds of a cycle that fire again (0: off)")
    cycle_escalation_action: str = action_param("stop")
    strict_models: list = param([], tune=False, doc="model-name globs for seed 004's strict counting by tool name")
    intensive_tools: list = param(INTENSIVE_TOOLS, tune=False, doc="tools counted against the intensive threshold")
    strict_intensive_threshold: int = param(
        4, low=2, high=20, step=1, doc="calls of one intensive tool per request that fire"
    )
    strict_other_threshold: int = param(5, low=2, high=20, step=1, doc="calls of any other tool per request that fire")
    strict_action: str = action_param("stop")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ladder(
            "consecutive_threshold", self.consecutive_threshold, "consecutive_escalation", self.consecutive_escalation
        )
        check_ladder("cycle_repeats", self.cycle_repeats, "cycle_escalation", self.cycle_escalation)
        for name in ("strict_models", "intensive_tools"):
            if not all(isinstance(item, str) for item in getattr(self, name)):
                raise ConfigError(f"{name}: expected a list of strings")


def _plain(tool_name: str) -> str:
    """A tool name without case or separators: read_file, ReadFile and read-file are one tool."""
    return tool_name.lower().replace("_", "").replace("-", "")


def _primitive(unit: list[str]) -> bool:
    """True if `unit` is not itself a repetition of a shorter unit."""
    p = len(unit)
    return not any(p % d == 0 and all(unit[i] == unit[i - d] for i in range(d, p)) for d in range(1, p))


class ToolRepetition(ToolCallDetector):
    name = "tool_repetition"
    Params = ToolRepetitionParams
    builtin = {
        "default": {},
        # Seed 002 (Gemini CLI): the call hash only, 5 in a row stops.
        "gemini": {
            "consecutive_threshold": 5,
            "consecutive_action": "stop",
            "consecutive_escalation": 0,
            "new_result_restarts": False,
            "polling_cap": 0,
            "cycle_repeats": 0,
        },
        "preview": {"strict_models": ["*preview*"]},
    }

    def __init__(self, params: ToolRepetitionParams | None = None):
        super().__init__(params)
        p = self.params
        self.cycles = PeriodTracker(max_period=p.cycle_max_period, min_elements=2)
        self.recent: deque[CallKey | None] = deque(maxlen=p.cycle_max_period)
        self.intensive = frozenset(_plain(name) for name in p.intensive_tools)
        self._strict_model: tuple[str, bool] = ("", False)
        self._reset()

    def _reset(self) -> None:
        self.run_key: CallKey | None = None
        self.run_start = 0  # first call of the run with unchanged results
        self.poll_start = 0  # first call of the run whatever the results
        self.run_result: str | None = None
        self.names: dict[str, list[int]] = {}  # tool name -> [first index, count]
        self.cycles.reset()
        self.recent.clear()

    def on_event(self, event: dict, ctx: StreamContext) -> list[Detection]:
        if event["type"] == "user":
            self._reset()
        return []

    def _strict(self, model: str) -> bool:
        if self._strict_model[0] != model:
            match = any(fnmatch.fnmatchcase(model.lower(), g.lower()) for g in self.params.strict_models)
            self._strict_model = (model, match)
        return self._strict_model[1]

    def on_result(self, index: int, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        if not self.params.new_result_restarts or self.run_key is None:
            return []
        if key.digest != self.run_key.digest or index < self.run_start:
            return []
        outcome = result_digest(event)
        if self.run_result is None:
            self.run_result = outcome
        elif outcome != self.run_result:
            self.run_start, self.run_result = index, outcome
        return []

    def on_call(self, key: CallKey, event: dict, ctx: StreamContext) -> list[Detection]:
        p = self.params
        if self.exempt(key):
            self.run_key = None
            self.cycles.push(object())  # breaks every run, matches nothing
            self.recent.append(None)
            return []
        found: list[Detection] = []
        self._consecutive(key, event, ctx, found)
        self._cycle(key, event, ctx, found)
        if p.strict_models and self._strict(ctx.model):
            self._by_name(key, event, ctx, found)
        return found

    def _consecutive(self, key: CallKey, event: dict, ctx: StreamContext, found: list[Detection]) -> None:
        p = self.params
        index = ctx.tool_calls
        if self.run_key is None or key.digest != self.run_key.digest:
            self.run_key, self.run_start, self.poll_start, self.run_result = key, index, index, None
        count = index - self.run_start + 1
        for threshold, action in (
            (p.consecutive_threshold, p.consecutive_action),
            (p.consecutive_escalation, p.consecutive_escalation_action),
        ):
            if count == threshold:
                found.append(
                    self._detection(
                        "consecutive_identical_tool_calls", event, ctx, self.run_start, key.text, 1, count, action
                    )
                )
        polled = index - self.poll_start + 1
        if p.polling_cap and polled == p.polling_cap and self.run_start > self.poll_start:
            found.append(
                self._detection("tool_polling_cap", event, ctx, self.poll_start, key.text, 1, polled, p.polling_action)
            )

    def _cycle(self, key: CallKey, event: dict, ctx: StreamContext, found: list[Detection]) -> None:
        p = self.params
        self.cycles.push(key.digest)
        self.recent.append(key)
        if p.cycle_repeats < 2:
            return
        for period in range(2, p.cycle_max_period + 1):
            length = self.cycles.run_length(period)
            if length < p.cycle_repeats * period or length % period:
                continue
            unit = list(self.recent)[-period:]
            if not _primitive([k.digest for k in unit]):
                continue
            rounds = length // period
            for threshold, action in (
                (p.cycle_repeats, p.cycle_action),
                (p.cycle_escalation, p.cycle_escalation_action),
            ):
                if rounds == threshold:
                    text = " → ".join(k.text for k in unit)
                    found.append(
                        self._detection(
                            "tool_call_cycle", event, ctx, ctx.tool_calls + 1 - length, text, period, rounds, action
                        )
                    )
            return  # the smallest period qualifying is the cycle

    def _by_name(self, key: CallKey, event: dict, ctx: StreamContext, found: list[Detection]) -> None:
        p = self.params
        entry = self.names.get(key.name)
        if entry is None:
            if len(self.names) >= NAMES_LIMIT:  # a stream inventing tool names: forget the oldest
                del self.names[next(iter(self.names))]
            entry = self.names[key.name] = [ctx.tool_calls, 0]
        entry[1] += 1
        intensive = _plain(key.name) in self.intensive
        threshold = p.strict_intensive_threshold if intensive else p.strict_other_threshold
        if entry[1] == threshold:
            found.append(
                self._detection("repeated_tool_name", event, ctx, entry[0], key.name, 1, entry[1], p.strict_action)
            )

    def _detection(self, kind, event, ctx, start, unit, period, repeats, action) -> Detection:
        return tools_detection(
            self.name,
            kind,
            event,
            ctx,
            start=start,
            end=ctx.tool_calls + 1,
            unit=unit,
            period=period,
            repeats=repeats,
            action=action,
        )
