"""`LoopDetected`: the loop signal a producer must act on (seed 004: a loop
signal that one consumer ignores is a loop that keeps running).

`LiveSession` raises it when the lab sends a stop-level detection, and the
SDK stream wrappers (`detector.stream_guard`) raise it when the lab or their
local `Monitor` says stop. It carries the detection as a dict with the
fields of docs/event-format.md (a lab detection also has `id`,
`profile` and `event_seq`).
"""

from __future__ import annotations

from collections.abc import Iterable

STOP_ACTIONS = ("stop",)  # the actions that raise unless a caller says otherwise


class LoopDetected(Exception):
    """A detection whose action says the stream must end.

    >>> signal = LoopDetected({"detector": "text_loop", "type": "unit", "action": "stop", "message": "x 5 times"})
    >>> (signal.detector, signal.type, signal.action, str(signal))
    ('text_loop', 'unit', 'stop', 'text_loop (stop): x 5 times')
    """

    def __init__(self, detection: dict, *, origin: str = "local"):
        self.detection = detection
        self.origin = origin  # "local" (a Monitor in this process) or "server" (the lab)
        self.detector: str = detection.get("detector", "")
        self.type: str = detection.get("type", "")
        self.action: str = detection.get("action", "")
        self.message: str = detection.get("message", "")
        super().__init__(f"{self.detector} ({self.action}): {self.message}")


def first_stop(detections: Iterable[dict], actions: Iterable[str] = STOP_ACTIONS) -> dict | None:
    """The first detection whose action is one of `actions`, else None."""
    actions = tuple(actions)
    return next((detection for detection in detections if detection.get("action") in actions), None)
