"""API streams framed as server-sent events give the same events as the
same stream with one JSON object per line, however the SSE is laid out."""

from __future__ import annotations

import json

import pytest

from detector.importers import TranscriptError, parse_bytes
from tests.shared_paths import FORMATS_DIR

OPENAI = FORMATS_DIR / "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt"
ANTHROPIC = FORMATS_DIR / "anthropic_stream/vercel__ai__anthropic-clear-thinking.1.chunks.txt"


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def openai_sse(objs):
    body = ": OPENROUTER PROCESSING\n\n" + "".join(f"data: {json.dumps(o)}\n\n" for o in objs)
    return (body + "data: [DONE]\n\n").encode()


def anthropic_sse(objs):
    return "".join(f"event: {o['type']}\ndata: {json.dumps(o)}\n\n" for o in objs).encode()


def multiline_sse(objs):
    """Each record's JSON spread over several `data:` lines, CRLF line ends."""
    events = []
    for o in objs:
        events.append("".join(f"data: {line}\r\n" for line in json.dumps(o, indent=1).splitlines()) + "\r\n")
    return "".join(events).encode()


def unseparated_sse(objs):
    """A capture that lost the blank lines between events."""
    return "".join(f"data: {json.dumps(o)}\n" for o in objs).encode() + b"data: [DONE]\n"


@pytest.mark.parametrize(
    ("path", "fmt", "frame"), [(OPENAI, "openai", openai_sse), (ANTHROPIC, "anthropic", anthropic_sse)]
)
@pytest.mark.parametrize("variant", ["plain", "multiline", "unseparated"])
def test_sse_gives_the_same_events_as_json_lines(path, fmt, frame, variant):
    objs = records(path)
    expected = parse_bytes(path.read_bytes(), path.name).events
    data = {"plain": frame, "multiline": multiline_sse, "unseparated": unseparated_sse}[variant](objs)
    for named in ("auto", fmt):
        transcript = parse_bytes(data, "stream.sse", named)
        assert transcript.format == fmt
        assert transcript.events == expected


def test_sse_line_numbers_point_at_the_data_line():
    data = (
        b'event: message_start\ndata: {"type": "message_start", "message": {"model": "m"}}\n\n'
        b'event: x\ndata: {"type": "ping"}\n\n'
    )
    assert parse_bytes(data, "s.sse").skipped == [(5, "ping")]


def test_a_bad_sse_event_names_its_line():
    data = b'data: {"id": "a", "choices": []}\n\n: keep-alive\n\ndata: {"id": "a", "choices": [\n\n'
    with pytest.raises(TranscriptError) as caught:
        parse_bytes(data, "s.sse", "openai")
    assert str(caught.value) == "s.sse: line 5: truncated JSON: Expecting value (column 25)"
