"""The records of an API stream, framed either as server-sent events
(`event:` / `data:` lines, `:` comments, `data: [DONE]`, data spread over
several `data:` lines) or as one JSON object per line. Both framings give
the same records; each comes with the line it starts on. O(n) in bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .source import JSON_DECODER, Source, split_lines
from .transcript import TranscriptError

SSE_PREFIXES = ("data:", "event:", "id:", "retry:", ":")


def is_sse(source: Source) -> bool:
    """True when the first non-blank line is server-sent-event framing."""
    return source.first_line().startswith(SSE_PREFIXES)


def stream_records(source: Source) -> Iterator[tuple[int, dict]]:
    """(line, JSON object) of every record of the stream, in order."""
    if not is_sse(source):
        yield from source.json_lines()
        return
    data: list[str] = []
    start = 0
    for number, line in enumerate([*split_lines(source.text), ""], 1):
        if not line.strip():  # a blank line ends an event
            yield from _event_records(source, data, start)
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            if not data:
                start = number
            data.append(value.removeprefix(" "))
        # `event:`, `id:`, `retry:` and `:` comments carry nothing the records lack


def _event_records(source: Source, data: list[str], start: int) -> Iterator[tuple[int, dict]]:
    """The record(s) of one event's `data:` lines. Captures that drop the
    blank line between events put several JSON objects in one event; when
    the joined data is not JSON but every line is, each line is a record."""
    payload = "\n".join(data)
    if not data or payload.strip() == "[DONE]":
        return
    try:
        record = source.json_object(payload, start)
    except TranscriptError as joined_error:
        lines = [
            (start + offset, line) for offset, line in enumerate(data) if line.strip() and line.strip() != "[DONE]"
        ]
        try:
            records = [(number, source.json_object(line, number)) for number, line in lines]
        except TranscriptError:
            raise joined_error from None
        if len(records) < 2:
            raise
        yield from records
        return
    yield start, record


def whole_document(source: Source) -> object | None:
    """The file as one JSON value, or None when it is a stream to read record
    by record (SSE, or JSON Lines: several lines, the first a JSON value of
    its own). A pretty-printed document that is cut short stays an error."""
    if is_sse(source):
        return None
    try:
        return source.json_document()
    except TranscriptError as document_error:
        lines = source.lines()
        if len(lines) < 2 or lines[0][1].lstrip().startswith("["):
            raise
        try:
            JSON_DECODER.decode(lines[0][1])
        except (ValueError, RecursionError):
            raise document_error from None  # a document cut short: say where
        return None
