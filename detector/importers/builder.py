"""`TranscriptBuilder`: what every parser fills while it reads, and the
small conversions the parsers share (tool arguments, tool output, times).

Appending an event is O(1); `finish()` (or `take()`, block by block)
validates every event once, so a session of n events costs O(n) whatever
the format.
"""

from __future__ import annotations

import json
from datetime import datetime

from ..events import EventError, validate_event
from .source import JSON_DECODER, Source
from .transcript import Transcript


class TranscriptBuilder:
    """Collects events in order plus the session's model, title and notes."""

    def __init__(self, source: Source, fmt: str, version: str):
        self.source = source
        self.format = fmt
        self.version = version
        self.events: list[dict] = []
        self.taken = 0  # events handed over by `take`
        self.model: str | None = None
        self.title: str | None = None
        self.session_id: str | None = None
        self.meta: dict = {}
        self.skipped: list[tuple[int | None, str]] = []
        self.warnings: list[str] = []
        self.time: float | None = None  # stamped on events as `t` (seconds since the epoch until `finish`)
        self.extra: dict = {}  # fields stamped on every event added, e.g. {"isSidechain": True}

    def at(self, timestamp: object) -> None:
        """Stamp the following events with `timestamp` (ISO 8601 text or
        seconds / milliseconds since the epoch); unreadable times are ignored."""
        self.time = epoch_seconds(timestamp)

    def add(self, kind: str, **fields: object) -> None:
        """Append one event; fields that are None are left out."""
        event = {"type": kind}
        for name, value in fields.items():
            if value is not None:
                event[name] = value
        if self.time is not None:
            event["t"] = self.time
        if self.extra:
            event.update(self.extra)
        self.events.append(event)

    def text(self, kind: str, text: object) -> None:
        """Append a `reasoning`, `content` or `user` event unless `text` is empty."""
        if isinstance(text, str) and text:
            self.add(kind, text=text)

    def skip(self, line: int | None, record_type: object) -> None:
        self.skipped.append((line, str(record_type)))

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def set_model(self, model: object) -> None:
        """The session's model: the first one a record names."""
        if self.model is None and isinstance(model, str) and model:
            self.model = model

    def header(self) -> dict:
        """The `session` event, from what the records said so far."""
        session: dict = {"type": "session", "source": self.format}
        if self.session_id:
            session["id"] = self.session_id
        if self.model:
            session["model"] = self.model
        meta = dict(self.meta)
        if self.title:
            meta["title"] = self.title
        if meta:
            session["meta"] = meta
        return session

    def take(self) -> list[dict]:
        """Hand over the events added since the last `take`, validated as
        `finish` validates them: for a format that stamps no times, which
        `finish` counts from the earliest of all the events."""
        events, self.events = self.events, []
        self._validate(events, self.taken + 1)
        self.taken += len(events)
        return events

    def finish(self) -> Transcript:
        """The transcript: a `session` event, then the events, with `t`
        counted from the earliest stamped event."""
        times = [event["t"] for event in self.events if "t" in event]
        if times:
            start = min(times)
            for event in self.events:
                if "t" in event:
                    event["t"] = round(event["t"] - start, 6)
        events = [self.header(), *self.events]
        self._validate(events, 0)
        return Transcript(
            format=self.format,
            parser_version=self.version,
            events=events,
            model=self.model,
            title=self.title,
            skipped=self.skipped,
            warnings=self.warnings,
        )

    def _validate(self, events: list[dict], first: int) -> None:
        """Validate `events`, numbered from `first` in messages (the session event is 0)."""
        for number, event in enumerate(events, first):
            try:
                validate_event(event)
            except EventError as exc:  # a value of the wrong type slipped through a parser
                raise self.source.error(f"event {number} ({event.get('type')}): {exc}", field=exc.field) from None


def epoch_seconds(timestamp: object) -> float | None:
    """Seconds since the epoch of an ISO 8601 string or a number (values
    above 1e11 are taken as milliseconds); None when unreadable or beyond
    the year 5000 either way."""
    if isinstance(timestamp, bool):
        return None
    if isinstance(timestamp, (int, float)):
        try:
            seconds = float(timestamp)
        except OverflowError:
            return None
        if seconds > 1e11:
            seconds /= 1000
        return seconds if abs(seconds) < 1e11 else None
    if isinstance(timestamp, str):
        try:
            return datetime.fromisoformat(timestamp).timestamp()
        except (ValueError, OverflowError, OSError):
            return None
    return None


def tool_args(value: object) -> dict:
    """Tool-call arguments as an object: JSON text is parsed; anything that
    is not an object is kept under ``_raw`` so nothing is lost."""
    if isinstance(value, dict):
        return value
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            parsed = JSON_DECODER.decode(value)
        except (ValueError, RecursionError):
            return {"_raw": value}
        return parsed if isinstance(parsed, dict) else {"_raw": value}
    return {"_raw": value}


def output_text(value: object) -> str:
    """A tool result as text: strings as they are, lists of content blocks
    joined by their text, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and all(
        isinstance(block, dict) and isinstance(block.get("text"), str) for block in value
    ):
        return "".join(block["text"] for block in value)
    return json.dumps(value, ensure_ascii=False)


def require_str(value: object) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_dict(value: object) -> dict:
    """`value` if it is a JSON object, else an empty one: parsers read
    untrusted records without a type check at every step."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list:
    """`value` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
