"""A transcript read a block of events at a time (`TranscriptBlocks`), so
that a store writes one block while the next is parsed.

The large-file formats (`events`, `openai`) parse as their blocks are asked
for (their `read_blocks`): an upload of a million events holds one block of
event dicts at a time, besides its text. The other formats parse whole and
hand their events over in blocks (`whole_blocks`). Either way each event is
parsed and validated once: O(n) in events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from .transcript import Transcript

BLOCK_EVENTS = 10_000  # events a block


@dataclass
class TranscriptBlocks:
    """One session's events after its `session` event, in order, a block
    (a list) at a time, and the `session` event: `header()` says what is
    known so far, all of it once `blocks` is exhausted. Bad input raises
    `TranscriptError` from `blocks` as it is reached."""

    format: str
    parser_version: str
    blocks: Iterator[list[dict]]
    header: Callable[[], dict]

    def model(self) -> str | None:
        """The session's model, as `Transcript.model`."""
        model = self.header().get("model")
        return model if isinstance(model, str) and model else None

    def title(self) -> str | None:
        """The session's title, as `Transcript.title`."""
        meta = self.header().get("meta")
        return meta.get("title") if isinstance(meta, dict) and isinstance(meta.get("title"), str) else None


def in_blocks(events: Iterable[dict], size: int) -> Iterator[list[dict]]:
    """`events` as lists of `size` (the last one shorter)."""
    events = iter(events)
    while block := list(islice(events, size)):
        yield block


def whole_blocks(transcript: Transcript, size: int = BLOCK_EVENTS) -> TranscriptBlocks:
    """A transcript parsed whole, handed over in blocks."""
    header = transcript.events[0]
    events = in_blocks(islice(transcript.events, 1, None), size)
    return TranscriptBlocks(transcript.format, transcript.parser_version, events, lambda: header)
