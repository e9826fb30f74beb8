"""Stream health (seed 003's EvolutionHealthChecker), judged from the events'
`t` (seconds since the session started), never from a clock.

- `stream_stalled`: no event for `stall_seconds` (600, the seed's progress
  interval) while the AI was working;
- `stream_idle`: no event for `idle_seconds` (1800, the seed's maximum idle
  time) while the AI was working: the stream is likely dead;
- `consecutive_errors`: `max_consecutive_errors` (5) failed tool results in
  a row.

"Working" is every moment except while the session waits for the user (from
a `finish` whose reason is not `tool_calls` or `length` until the next
event), so a user away for an hour is not a stall. A transcript shows a gap
when the event after it arrives; a live stream calls `Monitor.tick(t)` while
silent, and each gap fires each rule at most once. Events without `t` are
not timed. Cost per event O(1); memory O(1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .params import ConfigError, action_param, param
from .tool_keys import ErrorStreak, failed, tools_detection

# After a finish for these reasons the model goes on by itself.
WORKING_REASONS = ("tool_calls", "length")


@dataclass(frozen=True)
class HealthParams:
    stall_seconds: float = param(
        600.0, low=0.0, high=7200.0, step=30.0, doc="silence while working that is a stall (0: off)"
    )
    stall_action: str = action_param("warn")
    idle_seconds: float = param(
        1800.0, low=0.0, high=86400.0, step=60.0, doc="silence while working that is a dead stream (0: off)"
    )
    idle_action: str = action_param("stop")
    max_consecutive_errors: int = param(
        5, low=0, high=50, step=1, doc="failed tool results in a row that fire (0: off)"
    )
    errors_action: str = action_param("force_text")

    def __post_init__(self) -> None:
        if self.stall_seconds and self.idle_seconds and self.idle_seconds <= self.stall_seconds:
            raise ConfigError(f"idle_seconds: {self.idle_seconds} must be above stall_seconds {self.stall_seconds}")


class StreamHealth(Detector):
    name = "health"
    Params = HealthParams
    builtin = {"default": {}}
    reads_text_whole = True  # only that the model is producing

    def __init__(self, params: HealthParams | None = None):
        super().__init__(params)
        self.last_t: float | None = None
        self.working = False
        self.reported: set[str] = set()  # rules fired for the current gap
        self.streak = ErrorStreak()

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        found: list[Detection] = []
        t = event.get("t")
        if t is not None:
            found = self.tick(float(t), ctx, event)
            self.last_t, self.reported = float(t), set()
        kind = event["type"]
        if kind == "finish":
            self.working = event.get("reason") in WORKING_REASONS
        elif kind != "session":
            self.working = True
        if kind == "tool_result":
            errors = self.streak.update(event, ctx)
            limit = self.params.max_consecutive_errors
            if failed(event) and errors == limit:
                found.append(
                    self._detection(
                        "consecutive_errors", event, ctx, self.streak.start, errors, self.params.errors_action, {}
                    )
                )
        return found

    def tick(self, t: float, ctx: StreamContext, event: dict | None = None) -> list[Detection]:
        """Detections for a silence lasting until `t` (an event at `t`, or none yet)."""
        if self.last_t is None or not self.working:
            return []
        p = self.params
        gap = t - self.last_t
        found = []
        for kind, limit, action in (
            ("stream_stalled", p.stall_seconds, p.stall_action),
            ("stream_idle", p.idle_seconds, p.idle_action),
        ):
            if limit and gap >= limit and kind not in self.reported:
                self.reported.add(kind)
                found.append(
                    self._detection(kind, event, ctx, ctx.tool_calls, 1, action, {"gap_s": gap, "since_t": self.last_t})
                )
        return found

    def _detection(
        self, kind: str, event: dict | None, ctx: StreamContext, start: int, repeats: int, action: str, extra: dict
    ) -> Detection:
        return tools_detection(
            self.name,
            kind,
            event,
            ctx,
            channel="session",
            start=start,
            end=ctx.tool_calls,
            unit="",
            period=0,
            repeats=repeats,
            action=action,
            extra=extra,
        )
