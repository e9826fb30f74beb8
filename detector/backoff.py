"""Exponential backoff advice (seed 003, layer 4): after consecutive tool
errors, how long to wait before the next attempt.

The delay after n consecutive errors is ``base * multiplier ** (n - 1)``
(1 s, 2 s, 4 s, ...), plus a jitter of 10–20 % so that clients failing
together do not retry together, and never more than `max_seconds` (1 h).
Detectors have no clock and no randomness: the jitter fraction is passed in
(`backoff_delay`), or derived from the stream position (`jitter_fraction`),
so the same stream always gets the same advice; `backoff_range` gives the
whole 10–20 % range.

`BackoffAdvice` fires `backoff_advised` on each failed result once the
streak reaches `min_errors`, with the delay in `extra["delay_s"]` and its
range in `extra["delay_range"]`. Cost per event O(1); memory O(1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .params import ConfigError, action_param, param
from .tool_keys import ErrorStreak, digest, failed, tools_detection


def backoff_seconds(errors: int, base: float = 1.0, multiplier: float = 2.0, cap: float = 3600.0) -> float:
    """The delay without jitter after `errors` consecutive errors.

    >>> [backoff_seconds(n) for n in (0, 1, 2, 3, 13)]
    [0.0, 1.0, 2.0, 4.0, 3600.0]
    """
    if errors <= 0:
        return 0.0
    delay = base
    for _ in range(errors - 1):  # stops doubling at the cap: no overflow for long streaks
        delay *= multiplier
        if delay >= cap:
            return cap
    return min(delay, cap)


def backoff_delay(errors: int, jitter: float, base: float = 1.0, multiplier: float = 2.0, cap: float = 3600.0) -> float:
    """The delay with a jitter fraction (0.15 adds 15 %), at most `cap`.

    >>> backoff_delay(3, 0.15)
    4.6
    """
    return min(round(backoff_seconds(errors, base, multiplier, cap) * (1 + jitter), 6), cap)


def backoff_range(
    errors: int, low: float = 0.10, high: float = 0.20, base: float = 1.0, multiplier: float = 2.0, cap: float = 3600.0
) -> tuple[float, float]:
    """The shortest and longest delay the jitter allows.

    >>> backoff_range(2)
    (2.2, 2.4)
    """
    return backoff_delay(errors, low, base, multiplier, cap), backoff_delay(errors, high, base, multiplier, cap)


def jitter_fraction(seed: str, low: float = 0.10, high: float = 0.20) -> float:
    """A fraction in [low, high) fixed by `seed`: the same seed, the same jitter."""
    return low + (high - low) * int(digest(seed), 16) / 2**64


@dataclass(frozen=True)
class BackoffParams:
    min_errors: int = param(3, low=1, high=20, step=1, doc="consecutive errors from which backoff is advised")
    base_seconds: float = param(1.0, low=0.1, high=60.0, step=0.1, doc="delay after the first error")
    multiplier: float = param(2.0, low=1.0, high=4.0, step=0.5, doc="growth of the delay per further error")
    max_seconds: float = param(3600.0, low=1.0, high=86400.0, step=60.0, doc="longest delay advised")
    jitter_low: float = param(0.10, low=0.0, high=1.0, step=0.05, doc="smallest jitter fraction added")
    jitter_high: float = param(0.20, low=0.0, high=1.0, step=0.05, doc="largest jitter fraction added")
    action: str = action_param("warn")

    def __post_init__(self) -> None:
        if self.jitter_high < self.jitter_low:
            raise ConfigError(f"jitter_high: {self.jitter_high} is below jitter_low {self.jitter_low}")


class BackoffAdvice(Detector):
    name = "backoff"
    Params = BackoffParams
    builtin = {"default": {}}
    consumes = frozenset({"tool_result"})

    def __init__(self, params: BackoffParams | None = None):
        super().__init__(params)
        self.streak = ErrorStreak()

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        if event["type"] != "tool_result":
            return []
        p = self.params
        errors = self.streak.update(event, ctx)
        if not failed(event) or errors < p.min_errors:
            return []
        shape = (p.base_seconds, p.multiplier, p.max_seconds)
        jitter = jitter_fraction(f"{ctx.tool_calls}:{errors}", p.jitter_low, p.jitter_high)
        extra = {
            "delay_s": backoff_delay(errors, jitter, *shape),
            "delay_range": list(backoff_range(errors, p.jitter_low, p.jitter_high, *shape)),
        }
        detection = tools_detection(
            self.name,
            "backoff_advised",
            event,
            ctx,
            channel="session",
            start=self.streak.start,
            end=ctx.tool_calls,
            unit="",
            period=0,
            repeats=errors,
            action=p.action,
            extra=extra,
        )
        return [detection]
