"""`Monitor`: one stream's detectors, fed one event at a time.

The monitor validates each event, keeps the stream's positions (characters
per text channel across turns, tool-call index, turn number) and hands the
event to every enabled detector of its profile that reads that event type.

Text chunks are most of a stream, and most of them change nothing a
detector could report. So the monitor holds a chunk back while none of the
detectors that look inside chunks needs it, and then hands them all the
held text and the chunk after it, joined into one event: once a chunk
holds one of their wake characters (`Detector.wake_chars`: a sentence or
block end; a mark such as "," only with whitespace after it,
`Detector.mark_chars`, so a chunk ending in one is held and the next is
handed on) or fills the room one of them has (`Detector.quiet_room`: the
next character check, the longest block), before any other event and
before a clock tick. Detectors that read a channel's text only as a whole
(`Detector.reads_text_whole`: what a turn said, or that it said
something) get it in runs of about `HELD_TEXT_CHARS`. A quiet chunk (the
common case) thus costs a set-disjointness test and an append. Work per
event is O(chunk) plus the detectors'; the text held is bounded by the
detectors' rooms and `HELD_TEXT_CHARS`.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import re
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
        # Per text channel: the readers that look inside chunks, and those that
        # read its text only as a whole (they get it in runs).
        self._chunk_readers = {
            kind: [d for d in self._routes[kind] if not d.reads_text_whole] for kind in TEXT_CHANNELS
        }
        self._run_readers = {kind: [d for d in self._routes[kind] if d.reads_text_whole] for kind in TEXT_CHANNELS}
        self._wakes = {
            kind: frozenset().union(*[d.wake_chars or () for d in self._chunk_readers[kind]]) for kind in TEXT_CHANNELS
        }
        # Per channel, the wake characters that are marks for every chunk
        # reader (`Detector.mark_chars`), the others, and a pattern finding a
        # mark with whitespace after it (None: no marks).
        self._marks = {
            kind: self._wakes[kind]
            - frozenset().union(*[(d.wake_chars or frozenset()) - d.mark_chars for d in self._chunk_readers[kind]])
            for kind in TEXT_CHANNELS
        }
        self._hard_wakes = {kind: self._wakes[kind] - self._marks[kind] for kind in TEXT_CHANNELS}
        self._marked = {
            kind: re.compile(f"[{re.escape(''.join(sorted(marks)))}](?=\\s)") if marks else None
            for kind, marks in self._marks.items()
        }
        # A chunk reader without wake characters sees every chunk at once.
        self._every_chunk = {
            kind: any(d.wake_chars is None for d in self._chunk_readers[kind]) for kind in TEXT_CHANNELS
        }
        self._quiet_kind = ""  # the channel of the held text ("": none held)
        self._quiet_wake: frozenset[str] = frozenset()  # its chunk readers' wake characters
        self._quiet_marks: frozenset[str] = frozenset()  # those of them that are marks
        self._quiet_hard: frozenset[str] = frozenset()  # and the others
        self._quiet_marked: re.Pattern | None = None  # a mark with whitespace after it
        self._quiet_readers: list[Detector] = []  # its chunk readers
        self._quiet_every = False  # whether one of them reads every chunk at once
        self._quiet_runs: list[Detector] = []  # and its whole-text readers
        # A chunk without a wake character that ends before this channel offset
        # is held (the room the chunk readers left, as an offset: one sum per chunk).
        self._quiet_until = 0
        self._quiet: list[str] = []  # text no chunk reader has seen yet
        self._run: list[str] = []  # text the whole-text readers have not seen yet
        self._run_chars = 0
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
        kind = event.get("type") if type(event) is dict else None
        # The bulk of a stream, an untimed chunk no reader needs yet, is held.
        if kind == self._quiet_kind and "t" not in event:
            text = event.get("text")
            if type(text) is str:
                ctx = self.ctx
                offsets = ctx.offsets
                try:
                    end = offsets[kind] + len(text)
                except KeyError:
                    # No channel is held (`_quiet_kind` is "") and the event's
                    # type is "": refused by name as any unknown type (a try
                    # costs nothing on the held path).
                    validate_event(event)
                    raise
                if end < self._quiet_until:
                    if self._quiet_wake.isdisjoint(text):
                        self._quiet.append(text)
                        offsets[kind] = end
                        ctx.events += 1
                        return []
                    if self._only_marks(text):
                        self._quiet.append(text)
                        if text[-1] in self._quiet_marks:
                            # After a mark the next chunk is handed on: it may start with whitespace.
                            self._quiet_until = 0
                        offsets[kind] = end
                        ctx.events += 1
                        return []
                # A chunk of the held channel its readers need: the held text and it, as one event.
                if self._quiet:
                    self._quiet.append(text)
                    text = "".join(self._quiet)  # (one string built, not two)
                    self._quiet = []
                    offsets[kind] = end - len(text)
                    found = self._to_readers(kind, {"type": kind, "text": text})
                else:
                    found = self._to_readers(kind, event)
                offsets[kind] = end
                ctx.events += 1
                if found and any(d.action == "stop" for d in found):
                    self.stopped = True
                return found
        ctx = self.ctx
        if kind in TEXT_CHANNELS and "t" not in event and type(event.get("text")) is str:
            found = self._switch_channel(event)
            ctx.offsets[kind] += len(event["text"])
        else:
            validate_event(event)
            found = self._release_quiet()
            if kind == "session" and event.get("model"):
                ctx.model = event["model"]
            elif kind == "turn":
                ctx.turn += 1
            t = event.get("t")
            if t is not None:
                ctx.t = float(t)
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
        found = self._release_quiet()
        for detector in self.detectors:
            found.extend(detector.tick(t, self.ctx))
        if any(d.action == "stop" for d in found):
            self.stopped = True
        return found

    def _only_marks(self, text: str) -> bool:
        """Whether the wake characters in `text` are all marks, none with
        whitespace after it: no chunk reader needs the chunk yet."""
        marked = self._quiet_marked
        return marked is not None and self._quiet_hard.isdisjoint(text) and marked.search(text) is None

    def _switch_channel(self, event: dict) -> list[Detection]:
        """An untimed chunk of a channel other than the held text's (chunks of
        the held channel are `feed`'s): the held text goes to its readers, and
        this channel's readers get the chunk and hold text from here on."""
        kind = event["type"]
        found = self._release_quiet()
        self._quiet_kind, self._quiet_wake = kind, self._wakes[kind]
        self._quiet_marks, self._quiet_hard = self._marks[kind], self._hard_wakes[kind]
        self._quiet_marked = self._marked[kind]
        self._quiet_readers, self._quiet_runs = self._chunk_readers[kind], self._run_readers[kind]
        self._quiet_every = self._every_chunk[kind]
        return found + self._to_readers(kind, event)

    def _to_readers(self, kind: str, event: dict) -> list[Detection]:
        """Hand text (starting at the channel offset in `ctx`) to every chunk
        reader of the held channel `kind`, and to the whole-text readers once
        their run is long enough; set the room for the text held next."""
        ctx = self.ctx
        found = []
        room = HELD_TEXT_CHARS
        for detector in self._quiet_readers:
            hits = detector.feed(event, ctx)
            if hits:
                found += hits
            if detector.quiet_room < room:
                room = detector.quiet_room
        text = event["text"]
        self._quiet_until = 0 if self._quiet_every else ctx.offsets[kind] + len(text) + room
        if self._quiet_runs:
            self._run.append(text)
            self._run_chars += len(text)
            if self._run_chars >= HELD_TEXT_CHARS:
                ctx.offsets[kind] += len(text)
                found += self._release_run(kind)
                ctx.offsets[kind] -= len(text)
        return found

    def _release_quiet(self) -> list[Detection]:
        """Hand every reader the text held for it; nothing is held after."""
        kind = self._quiet_kind
        if not kind:
            return []
        found = []
        if self._quiet:
            ctx = self.ctx
            end = ctx.offsets[kind]
            held = "".join(self._quiet)
            self._quiet = []
            ctx.offsets[kind] = end - len(held)
            found = self._to_readers(kind, {"type": kind, "text": held})
            ctx.offsets[kind] = end
        found += self._release_run(kind)
        self._quiet_kind, self._quiet_until = "", 0
        return found

    def _release_run(self, kind: str) -> list[Detection]:
        """The whole-text readers' run, as one event (`ctx` offsets stand at its end)."""
        if not self._run:
            return []
        event = {"type": kind, "text": "".join(self._run)}
        self._run, self._run_chars = [], 0
        found: list[Detection] = []
        for detector in self._quiet_runs:
            found += detector.feed(event, self.ctx)
        return found

    def take_checkpoints(self) -> list[Checkpoint]:
        """Checkpoint evaluations recorded since the last call."""
        taken, self.ctx.checkpoints = self.ctx.checkpoints, []
        return taken
