"""What detectors report: `Detection` (a loop was found) and `Checkpoint`
(a checkpoint-style detector evaluated a range, loop or not).

Both are frozen, slotted records; `to_dict()` gives the fields of the
contract in docs/event-format.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

ACTIONS = ("warn", "nudge", "force_text", "stop")
CHANNELS = ("reasoning", "content", "tools", "session")


@dataclass(frozen=True, slots=True)
class Detection:
    """A loop found in one channel.

    `start`/`end` are the repeated region (character offsets, or tool-call
    indices on the `tools` channel); `at` is how far the channel had been read
    when the detector fired.
    """

    detector: str
    type: str
    channel: str
    start: int
    end: int
    at: int
    unit: str
    period: int
    repeats: int
    action: str
    message: str
    turn: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, not {self.action!r}")
        if self.channel not in CHANNELS:
            raise ValueError(f"channel must be one of {CHANNELS}, not {self.channel!r}")

    def to_dict(self) -> dict:
        data = asdict(self)
        if not data["extra"]:
            del data["extra"]
        return data


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One evaluation by a checkpoint-style detector (seed 000): which
    checkpoint, which range of the channel it looked at, and what it found
    (`result` is the detection type, or "" when it found no loop)."""

    detector: str
    channel: str
    checkpoint: int
    start: int
    end: int
    check: str
    result: str
    turn: int = 0

    def to_dict(self) -> dict:
        return asdict(self)
