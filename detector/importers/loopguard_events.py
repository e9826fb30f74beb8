"""The `events` format: LoopGuard's own JSON Lines (event-format.md).

Every line is validated as it is read; a bad line (invalid JSON, unknown
event `type`, a field of the wrong type, a `session` event that is not the
first) is an input error naming that line. O(n) in lines.
"""

from __future__ import annotations

from ..events import EventError, validate_event
from .source import Source
from .transcript import Transcript

NAME = "events"
VERSION = "events/1"


def parse(source: Source) -> Transcript:
    events: list[dict] = []
    for number, event in source.json_lines():
        try:
            validate_event(event)
        except EventError as exc:
            raise source.error(exc.args[0], line=number, field=exc.field) from None
        if event["type"] == "session" and events:
            raise source.error("a session event must be the first event", line=number, field="type")
        events.append(event)
    if events[0]["type"] != "session":
        events.insert(0, {"type": "session", "source": NAME})
    session = events[0]
    model = session.get("model") if isinstance(session.get("model"), str) and session.get("model") else None
    meta = session.get("meta")
    title = meta.get("title") if isinstance(meta, dict) and isinstance(meta.get("title"), str) else None
    return Transcript(format=NAME, parser_version=VERSION, events=events, model=model, title=title)
