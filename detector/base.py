"""The two things every detector shares: the `Detector` base class and the
`StreamContext` the monitor hands it with each event.

A detector is a small class per stream: `feed(event, ctx)` gets one
validated event and returns the detections it fires. It reads positions from
`ctx` (offsets *before* this event is appended) and never from a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .detection import Checkpoint, Detection


@dataclass(slots=True)
class StreamContext:
    """Where the stream stands when an event arrives.

    `offsets[channel]` is how many characters of that channel were read
    before this event; `tool_calls` how many tool calls came before it;
    `turn` how many `turn` events were seen including this one.
    """

    model: str = ""
    turn: int = 0
    offsets: dict[str, int] = field(default_factory=lambda: {"reasoning": 0, "content": 0})
    tool_calls: int = 0
    events: int = 0
    t: float | None = None
    checkpoints: list[Checkpoint] = field(default_factory=list)

    def record_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.checkpoints.append(checkpoint)


class Detector:
    """Base of every detector family.

    Subclasses set `name` (the key in profiles and the `detector` field of
    their detections), `Params` (a dataclass of `param()` fields) and
    `builtin` (built-in profile name -> parameter overrides, for the
    profiles the detector is enabled in), and implement `feed`.
    """

    name: ClassVar[str]
    Params: ClassVar[type]
    builtin: ClassVar[dict[str, dict[str, Any]]] = {}
    # The event types `feed` reads; None: every event. The monitor hands a
    # detector only these, so a content chunk skips the tool detectors.
    consumes: ClassVar[frozenset[str] | None] = None
    # True: the detector reads `reasoning`/`content` text only as a whole, so
    # the monitor may hand it several chunks joined into one event (`ctx`
    # offsets then stand past the joined chunks). It must give the same
    # result for the run as for its chunks one by one, and fire nothing on
    # a text event without `t`.
    reads_text_whole: ClassVar[bool] = False
    # Set by a detector that reads inside chunks but has nothing to do for
    # most of them: a chunk holding none of `wake_chars` and shorter than
    # `quiet_room` would only be buffered, so the monitor holds it and
    # hands it on later, joined with the chunks after it (as for
    # `reads_text_whole`, the result must not depend on the chunking).
    # None: every chunk is handed on at once.
    wake_chars: ClassVar[frozenset[str] | None] = None
    # With `wake_chars` set, `feed` of a text event leaves here how much quiet
    # text of that event's channel (chunks holding none of `wake_chars`) the
    # monitor may hold for it: the held text must stay shorter. An attribute,
    # not a method: the monitor reads it after every text it hands on.
    quiet_room: int = 0
    # Those of `wake_chars` that matter only when whitespace follows them
    # (a comma or a full stop ends a block only then): a chunk whose only
    # wake characters are such marks, none with whitespace after it in the
    # chunk, is held too; one that ends with a mark makes the monitor hand
    # on the next chunk (its first character may be the whitespace). After
    # text handed on that ends with a mark, `quiet_room` must be 0 for the
    # same reason.
    mark_chars: ClassVar[frozenset[str]] = frozenset()
    # True: the detector asks another service (the LLM judge): it is built
    # with `client=`, the callable the Monitor's owner hands in; detectors do
    # no I/O of their own.
    takes_client: ClassVar[bool] = False

    def __init__(self, params: Any = None):
        self.params = params if params is not None else self.Params()

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        raise NotImplementedError

    def tick(self, t: float, ctx: StreamContext) -> list[Detection]:
        """Time `t` has come with no event (a live stream gone silent); most
        detectors only look at events."""
        return []
