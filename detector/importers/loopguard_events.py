"""The `events` format: LoopGuard's own JSON Lines (event-format.md).

Every line is validated as it is read; a bad line (invalid JSON, unknown
event `type`, a field of the wrong type, a `session` event that is not the
first) is an input error naming that line. O(n) in lines; `read_blocks`
holds one block of events at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

from ..events import EventError, validate_event
from .blocks import BLOCK_EVENTS, TranscriptBlocks, in_blocks
from .source import Source
from .transcript import Transcript

NAME = "events"
VERSION = "events/1"


def parse(source: Source) -> Transcript:
    read = read_blocks(source)
    events = [event for block in read.blocks for event in block]
    return Transcript(
        format=NAME, parser_version=VERSION, events=[read.header(), *events], model=read.model(), title=read.title()
    )


def read_blocks(source: Source, size: int = BLOCK_EVENTS) -> TranscriptBlocks:
    """The file's events in blocks of `size`, parsed as they are asked for;
    the header is the file's first event when that is a `session` event."""
    found: list[dict] = []  # the file's own session event, once read

    def blocks() -> Iterator[list[dict]]:
        events = _events(source)
        first = next(events)  # the file is not blank: it has a line
        if first["type"] == "session":
            found.append(first)
        else:
            events = chain([first], events)
        yield from in_blocks(events, size)

    return TranscriptBlocks(NAME, VERSION, blocks(), lambda: found[0] if found else {"type": "session", "source": NAME})


def _events(source: Source) -> Iterator[dict]:
    for index, (number, line) in enumerate(source.lines()):
        event = source.json_object(line, number)  # `json_lines` inlined: a generator less per event
        try:
            validate_event(event)
        except EventError as exc:
            raise source.error(exc.args[0], line=number, field=exc.field) from None
        if event["type"] == "session" and index:
            raise source.error("a session event must be the first event", line=number, field="type")
        yield event
