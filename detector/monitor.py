"""`Monitor`: one stream's detectors, fed one event at a time.

The monitor validates each event, keeps the stream's positions (characters
per text channel across turns, tool-call index, turn number) and hands the
event to every enabled detector of its profile that reads that event type.

Text chunks are most of a stream. Detectors that read a channel's text only
as a whole (`Detector.reads_text_whole`: what a turn said, or that it said
something) get it in runs instead: the chunks joined into one event, handed
on before any other event, before a clock tick and every `HELD_TEXT_CHARS`
characters. So a chunk costs only the detectors that look inside it. Its
own work per event is O(1) plus the detectors'; the text it holds is
bounded by `HELD_TEXT_CHARS`.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path

from .base import Detector, StreamContext
from .config import Config, Profile, builtin_config
from .detection import Checkpoint, Detection
from .events import EVENT_TYPES, TEXT_CHANNELS, validate_event
from .registry import DETECTORS

HELD_TEXT_CHARS = 1024  # a run of 4-character chunks: 256 small strings held


class StaleMonitorError(ValueError):
    """A pickled Monitor made by other detector code."""


@functools.cache
def detector_code() -> str:
    """A digest of this package's source: a Monitor pickled by one version of
    the detectors is not loaded by another, whose classes its state may not
    fit (the live lab then builds a new one and feeds it the stream)."""
    package = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class Monitor:
    """Loop detection for one stream.

    >>> m = Monitor("default")
    >>> m.feed({"type": "content", "text": "Hello."})
    []
    """

    def __init__(
        self,
        profile: str | Profile = "default",
        *,
        config: Config | None = None,
        model: str = "",
        judge_client: Callable[[dict], dict] | None = None,
    ):
        """`judge_client`: the LLM judge's chat client (payload -> response
        JSON), needed when the profile enables `llm_judge`; see
        `detector.chat_client.judge_client_for`."""
        if isinstance(profile, str):
            profile = (config or builtin_config()).select(profile)
        self.profile = profile
        self.ctx = StreamContext(model=model)
        self.detectors: list[Detector] = [
            DETECTORS[name](params, client=judge_client) if DETECTORS[name].takes_client else DETECTORS[name](params)
            for name, params in profile.detectors.items()
        ]
        self._routes: dict[str, list[Detector]] = {
            kind: [d for d in self.detectors if d.consumes is None or kind in d.consumes] for kind in EVENT_TYPES
        }
        # Per text chunk: the detectors that look inside it; the others get runs.
        self._chunk_routes = {kind: [d for d in self._routes[kind] if not d.reads_text_whole] for kind in TEXT_CHANNELS}
        self._run_routes = {kind: [d for d in self._routes[kind] if d.reads_text_whole] for kind in TEXT_CHANNELS}
        self._held_kind = ""
        self._held: list[str] = []
        self._held_chars = 0
        self.stopped = False

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_code": detector_code()}

    def unpicklable_detectors(self) -> dict[str, str]:
        """Detector name -> why its state does not pickle, for each detector
        of this Monitor that cannot be kept between messages (a client or an
        embedding function that is a local function, say)."""
        problems = {}
        for detector in self.detectors:
            try:
                pickle.dumps(detector, protocol=pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                problems[detector.name] = f"{type(exc).__name__}: {exc}"
        return problems

    def __setstate__(self, state: dict) -> None:
        if state.pop("_code", None) != detector_code():
            raise StaleMonitorError("this Monitor was pickled by other detector code: start a new one")
        self.__dict__.update(state)

    @classmethod
    def for_model(cls, model: str, config: Config | None = None) -> Monitor:
        """The monitor of the profile whose model globs match `model`."""
        return cls((config or builtin_config()).select(model=model), model=model)

    def feed(self, event: dict) -> list[Detection]:
        """Push one event; return the detections it fired (maybe none)."""
        ctx = self.ctx
        kind = event.get("type") if type(event) is dict else None
        # The bulk of a stream, a text chunk without a time stamp, takes the short way.
        if kind in TEXT_CHANNELS and "t" not in event and type(event.get("text")) is str:
            routes = self._chunk_routes[kind]
            found = []
            if self._run_routes[kind]:
                if kind != self._held_kind or self._held_chars >= HELD_TEXT_CHARS:
                    found = self._release_text(kind)
                self._held.append(event["text"])
                self._held_chars += len(event["text"])
        else:
            validate_event(event)
            routes = self._routes[kind]
            found = self._release_text("")
            if kind == "session" and event.get("model"):
                ctx.model = event["model"]
            elif kind == "turn":
                ctx.turn += 1
            t = event.get("t")
            if t is not None:
                ctx.t = float(t)
        for detector in routes:
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
        found = self._release_text("")
        for detector in self.detectors:
            found.extend(detector.tick(t, self.ctx))
        if any(d.action == "stop" for d in found):
            self.stopped = True
        return found

    def _release_text(self, next_kind: str) -> list[Detection]:
        """Hand the held run of text, as one event, to the whole-text readers;
        the next run held is of `next_kind`."""
        held, kind = self._held, self._held_kind
        self._held, self._held_chars, self._held_kind = [], 0, next_kind
        if not held:
            return []
        event = {"type": kind, "text": "".join(held)}
        found: list[Detection] = []
        for detector in self._run_routes[kind]:
            found += detector.feed(event, self.ctx)
        return found

    def take_checkpoints(self) -> list[Checkpoint]:
        """Checkpoint evaluations recorded since the last call."""
        taken, self.ctx.checkpoints = self.ctx.checkpoints, []
        return taken
