"""The producer's messages (docs/api.md, "Live ingest"), parsed
and checked before anything is stored. Pure: a dict in, an `IngestMessage`
out, or a `FieldError` naming the field.

- `{"seq": N, "event": {...}}` or `{"seq": N, "events": [...]}`: N numbers
  the producer's *messages* (1, 2, 3, ...), whatever the number of events in
  each; the server acknowledges N once the message is stored.
- `{"close": true}`: the producer is done; the session is closed and takes no
  more events. It may also ride on an events message (stored, then closed).
- `"ack_now": true` on an events message: under protocol 3 its ack is sent
  once it is stored, not held (`answers.producer_answer`). Alone,
  `{"ack_now": true}`: the ack held for the messages before it, at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from django.conf import settings

from detector import EventError, validate_event
from detector.json_depth import json_depth_at, json_depth_problem
from loopguard_site.errors import FieldError
from loopguard_site.storable import unstorable_event
from loopguard_site.transcripts.event_rows import event_json_finite

MAX_EVENTS_PER_MESSAGE = 10_000


@dataclass(frozen=True)
class IngestMessage:
    seq: int | None  # None: a bare close, or a bare ack_now
    events: list[dict]
    close: bool = False
    texts: list[str] = field(default_factory=list)  # each event's JSON text as stored (`event_json`)
    ack_now: bool = False  # protocol 3: acknowledge it once stored, without holding the ack


_SEQ_MEMBER = re.compile(r'"seq"\s*:\s*(\d{1,18})\b')


def too_deep(text: str) -> tuple[FieldError, int | None] | None:
    """The refusal of a message's text nested past LOOPGUARD_MAX_JSON_DEPTH
    (found before it is parsed), naming the field, and the message's seq if
    it has one; None for a text that may be parsed."""
    problem = json_depth_problem(text, settings.LOOPGUARD_MAX_JSON_DEPTH)
    if problem is None:
        return None
    seq = next((int(m.group(1)) for m in _SEQ_MEMBER.finditer(text) if json_depth_at(text, m.start()) == 1), None)
    return FieldError(f"{problem} (LOOPGUARD_MAX_JSON_DEPTH)", field=problem.path or None), seq


def parse_message(data: object) -> IngestMessage:
    """Check one producer message.

    >>> message = parse_message({"seq": 1, "event": {"type": "content", "text": "Hi"}})
    >>> message.seq, message.events, message.close, message.texts
    (1, [{'type': 'content', 'text': 'Hi'}], False, ['{"type": "content", "text": "Hi"}'])
    >>> parse_message({"seq": 2, "events": [{"type": "content"}]})
    Traceback (most recent call last):
    ...
    loopguard_site.errors.FieldError: events[0].text: field 'text' of a content event must be a string
    """
    if not isinstance(data, dict):
        raise FieldError("a message must be a JSON object")
    close = data.get("close", False)
    if not isinstance(close, bool):
        raise FieldError("close must be true or false", field="close")
    ack_now = data.get("ack_now", False)
    if not isinstance(ack_now, bool):
        raise FieldError("ack_now must be true or false", field="ack_now")
    if (close or ack_now) and "seq" not in data and "event" not in data and "events" not in data:
        return IngestMessage(seq=None, events=[], close=close, ack_now=ack_now)
    seq = data.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise FieldError("seq must be a whole number from 1 on", field="seq")
    if ("event" in data) == ("events" in data):
        raise FieldError("send exactly one of 'event' (one event) or 'events' (a list)", field="events")
    if "event" in data:
        key, events = "event", [data["event"]]
    else:
        key, events = "events", data["events"]
        if not isinstance(events, list) or not events:
            raise FieldError("events must be a non-empty list of events", field="events")
        if len(events) > MAX_EVENTS_PER_MESSAGE:
            raise FieldError(f"at most {MAX_EVENTS_PER_MESSAGE} events per message", field="events")
    for index, event in enumerate(events):
        where = key if key == "event" else f"events[{index}]"
        try:
            validate_event(event)
        except EventError as exc:
            field = f"{where}.{exc.field}" if exc.field else where
            raise FieldError(f"{field}: {exc}", field=field) from exc
    texts = _storable_texts(key, events)
    return IngestMessage(seq=seq, events=events, close=close, texts=texts, ack_now=ack_now)


def _storable_texts(key: str, events: list[dict]) -> list[str]:
    """Each event's JSON text as stored; refuse what the database cannot
    store (NUL, lone surrogates, NaN). The check needs the texts anyway, and
    the ingest stores them as they are: each event is encoded once."""
    try:
        texts = [event_json_finite(event) for event in events]
    except ValueError:  # NaN or Infinity (what a number past a float's range parses to)
        texts = None
    if problem := unstorable_event(events, None if texts is None else "\n".join(texts)):
        number, path, what = problem
        where = key if key == "event" else f"events[{number - 1}]"
        raise FieldError(f"{where}.{path} holds {what}", field=f"{where}.{path}")
    if texts is None:
        raise FieldError(f"{key} holds NaN or Infinity, which JSON has not", field=key)
    return texts


@dataclass(frozen=True)
class ProducerSocket:
    """Who an ingest socket is: the client's `producer` id and `connection`
    number (`LiveSession` counts its connections 1, 2, ... in its socket's
    query string; None when a client sends none) and when the lab began
    serving it (`since`, epoch seconds)."""

    producer: str | None
    connection: int | None
    since: float

    def replaced_by(self, other: ProducerSocket) -> bool:
        """Whether `other`, announcing itself, takes this socket's session over.
        The same producer's connections go by its own count: a connect it
        gave up on may be served after its next one (a storm), and must not
        close it. Other producers' go by `since`: a newer one takes over."""
        if self.producer is not None and other.producer == self.producer:
            return (other.connection or 0) > (self.connection or 0)
        return other.since >= self.since


def producer_socket(query_string: bytes, since: float) -> ProducerSocket:
    """The `ProducerSocket` of a socket's query string (`producer`,
    `connection`); malformed values count as absent."""
    query = parse_qs(query_string.decode("latin-1"))
    producer = query.get("producer", [None])[0]
    connection = query.get("connection", [""])[0]
    return ProducerSocket(
        producer=producer[:64] if producer else None,
        connection=int(connection) if connection.isdigit() and len(connection) < 10 else None,
        since=since,
    )


def acks_protocol(query_string: bytes) -> int:
    """The acknowledgements a producer socket asked for (`?protocol=N`,
    `answers`): 2 one ack for its messages stored together, 3 that ack
    held a while; 1 (the first protocol, one ack a message) for anything else."""
    version = parse_qs(query_string.decode("latin-1")).get("protocol", [""])[0]
    return int(version) if version in ("2", "3") else 1
