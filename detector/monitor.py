"""`Monitor`: one stream's detectors, fed one event at a time.

The monitor validates each event, keeps the stream's positions (characters
per text channel across turns, tool-call index, turn number) and hands the
event to every enabled detector of its profile that reads that event type. Its own work per event is
O(1) plus the detectors'; it keeps no text.
"""

from __future__ import annotations

from .base import Detector, StreamContext
from .config import Config, Profile, builtin_config
from .detection import Checkpoint, Detection
from .events import EVENT_TYPES, TEXT_CHANNELS, validate_event
from .registry import DETECTORS


class Monitor:
    """Loop detection for one stream.

    >>> m = Monitor("default")
    >>> m.feed({"type": "content", "text": "Hello."})
    []
    """

    def __init__(self, profile: str | Profile = "default", *, config: Config | None = None, model: str = ""):
        if isinstance(profile, str):
            profile = (config or builtin_config()).select(profile)
        self.profile = profile
        self.ctx = StreamContext(model=model)
        self.detectors: list[Detector] = [DETECTORS[name](params) for name, params in profile.detectors.items()]
        self._routes: dict[str, list[Detector]] = {
            kind: [d for d in self.detectors if d.consumes is None or kind in d.consumes] for kind in EVENT_TYPES
        }
        self.stopped = False

    @classmethod
    def for_model(cls, model: str, config: Config | None = None) -> Monitor:
        """The monitor of the profile whose model globs match `model`."""
        return cls((config or builtin_config()).select(model=model), model=model)

    def feed(self, event: dict) -> list[Detection]:
        """Push one event; return the detections it fired (maybe none)."""
        validate_event(event)
        ctx = self.ctx
        kind = event["type"]
        if kind == "session" and event.get("model"):
            ctx.model = event["model"]
        elif kind == "turn":
            ctx.turn += 1
        t = event.get("t")
        if t is not None:
            ctx.t = float(t)
        found: list[Detection] = []
        for detector in self._routes[kind]:
            hits = detector.feed(event, ctx)
            if hits:
                found += hits
        if kind in TEXT_CHANNELS:
            ctx.offsets[kind] += len(event["text"])
        elif kind == "tool_call":
            ctx.tool_calls += 1
        ctx.events += 1
        if found and any(d.action == "stop" for d in found):
            self.stopped = True
        return found

    def tick(self, t: float) -> list[Detection]:
        """Detections for silence: time `t` (seconds since the session
        started, on the events' `t` scale) has come and no event with it.
        The live server calls this while a stream is quiet."""
        found: list[Detection] = []
        for detector in self.detectors:
            found.extend(detector.tick(t, self.ctx))
        if any(d.action == "stop" for d in found):
            self.stopped = True
        return found

    def take_checkpoints(self) -> list[Checkpoint]:
        """Checkpoint evaluations recorded since the last call."""
        taken, self.ctx.checkpoints = self.ctx.checkpoints, []
        return taken
