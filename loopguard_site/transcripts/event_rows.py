"""Storing a session's events fast: 100,000 events in a few seconds.

Live ingest stores the messages of many sessions at once the same way.

`bulk_create` spends most of its time building and preparing 100,000 model
instances (about 20 s); events need none of that. Rows are (session, seq,
type, JSON text), the JSON encoded as `JSONField` stores it. PostgreSQL
takes them through COPY (about 2 s for 100,000; INSERTs of many rows take
8-10 s there); SQLite through multi-row INSERTs, which it runs in process.
An import sends its rows a block at a time as it parses them
(`event_blocks_insert`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from json.encoder import c_make_encoder, encode_basestring

from django.db import connection, connections

from detector import TEXT_CHANNELS

from .models import Event

SQLITE_BATCH = 1000  # rows per INSERT: 4,000 parameters, under SQLite's limit of 32,766
COPY_BLOCK = 10_000  # rows per write to PostgreSQL's COPY
_FIELDS = ("session", "seq", "type", "data")
Row = tuple[int, int, str, str]  # session id, seq, type, `event_json`


def _encoder_function(encoder: json.JSONEncoder) -> Callable[[dict], str]:
    """`encoder.encode` for a dict, without what it does per call: build a C
    encoder (with a dict of the objects seen, for a circular check that
    parsed JSON never needs) and check the argument's type. The C encoder is
    built once; an interpreter without it keeps `encode`."""
    if c_make_encoder is None:
        return encoder.encode
    encode = c_make_encoder(
        None,
        encoder.default,
        encode_basestring,
        None,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )
    return lambda event: encode(event, 0)[0]


# `json.dumps(event, ensure_ascii=False)` builds an encoder per call: a third of its time.
_encode = _encoder_function(json.JSONEncoder(ensure_ascii=False))
_encode_finite = _encoder_function(json.JSONEncoder(ensure_ascii=False, allow_nan=False))


def event_json(event: dict) -> str:
    """The event's JSON text as `JSONField` stores it (`json.dumps(event, ensure_ascii=False)`)."""
    return _encode(event)


def event_json_finite(event: dict) -> str:
    """`event_json`, or ValueError for an event holding NaN or Infinity (which JSON has not)."""
    return _encode_finite(event)


# A text chunk without a time stamp (most of a stream) as stored JSON text
# reads it: (type, head, tail) around the text, in PostgreSQL's jsonb key
# order (`data::text`) and in `event_json`'s (SQLite keeps that text).
_TEXT_EVENT_FRAMES = [
    frame
    for kind in TEXT_CHANNELS
    for frame in ((kind, '{"text": "', f'", "type": "{kind}"}}'), (kind, f'{{"type": "{kind}", "text": "', '"}'))
]


def event_from_json(text: str) -> dict:
    """The event a stored JSON text holds. A text chunk whose text needs no
    escape (8 quotes in all, no backslash: its text holds neither) is cut
    out of its frame, about five times faster than `json.loads`."""
    if "\\" not in text and text.count('"') == 8:
        for kind, head, tail in _TEXT_EVENT_FRAMES:
            if text.startswith(head) and text.endswith(tail):
                return {"type": kind, "text": text[len(head) : -len(tail)]}
    return json.loads(text)


def events_insert(session_id: int, events: Sequence[dict]) -> None:
    """Insert `events` as seq 1..n of the session (inside the caller's transaction)."""
    numbered_events_insert(
        (session_id, seq, event["type"], event_json(event)) for seq, event in enumerate(events, start=1)
    )


def numbered_events_insert(rows: Iterable[Row]) -> None:
    """Insert events given as (session id, seq, type, `event_json`), of any
    sessions (inside the caller's transaction)."""
    rows = iter(rows)
    event_blocks_insert(iter(lambda: list(islice(rows, COPY_BLOCK)), []))


def numbered_events_statements(rows: Sequence[Row]) -> list[tuple[str, list]]:
    """`numbered_events_insert` as statements (SQL, parameters) for the
    caller to send with its others (`batch_sql.rows_update`'s `before`). On
    PostgreSQL one INSERT, each column's values one text, a line each (no
    value holds a newline: JSON text escapes it), split by the server:
    a COPY waits for two round trips of its own (its start, its end), and
    a list parameter costs psycopg Python work per value (live ingest's
    batches; an import keeps COPY)."""
    if not rows:
        return []
    if connection.vendor == "postgresql":
        values = ["\n".join(map(str, column)) for column in zip(*rows, strict=True)]
        return [(_unnest_insert_text(connection.alias), values)]
    return list(_sqlite_inserts(*_events_table(), rows))


@functools.cache
def _unnest_insert_text(alias: str) -> str:
    """`numbered_events_statements`' INSERT on PostgreSQL, the same for any
    rows: built once per process (the columns' types, asked of Django for
    each batch, took 2 % of a live server's CPU)."""
    database = connections[alias]
    table, columns = _events_table(database)
    types = [Event._meta.get_field(name).db_type(database) for name in _FIELDS]
    arrays = ", ".join(f"string_to_array(%s, E'\\n')::{kind}[]" for kind in types)
    return f"INSERT INTO {table} ({columns}) SELECT * FROM unnest({arrays})"


def _events_table(database=connection) -> tuple[str, str]:
    """The events table's quoted name and its `_FIELDS` columns, for SQL."""
    quote = database.ops.quote_name
    return quote(Event._meta.db_table), ", ".join(quote(Event._meta.get_field(name).column) for name in _FIELDS)


def _sqlite_inserts(table: str, columns: str, rows: Iterable[Row]) -> Iterator[tuple[str, list]]:
    """INSERT statements of at most SQLITE_BATCH rows each (SQLite's bound on parameters)."""
    rows = iter(rows)
    while batch := list(islice(rows, SQLITE_BATCH)):
        values = ", ".join(["(%s, %s, %s, %s)"] * len(batch))
        yield f"INSERT INTO {table} ({columns}) VALUES {values}", [v for row in batch for v in row]


def event_blocks_insert(blocks: Iterable[Sequence[Row]]) -> None:
    """Insert events given a block of rows (session id, seq, type,
    `event_json`) at a time (inside the caller's transaction), each sent
    as it comes: PostgreSQL stores one block while the caller makes the
    next. (psycopg's `QueuedLibpqWriter`, a thread sending the blocks, made
    a 100,000-event import no faster: 0.95-1.12 s at best either way.)"""
    table, columns = _events_table()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # the driver's own cursor: its errors are wrapped as Django's (a
            # connection dropped mid-COPY is an OperationalError, answered 503)
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for block in blocks:
                    copy.write(_copy_text(block))
            return
        for sql, params in _sqlite_inserts(table, columns, chain.from_iterable(blocks)):
            cursor.execute(sql, params)


def _copy_text(rows: Iterable[Row]) -> str:
    """Rows in COPY's text format, built as one string (`write_row` per row
    costs more than the rest of the insert). JSON text holds no tab, newline
    or carriage return (JSON escapes them), nor do ids and event types: only
    backslashes need escaping, in one pass."""
    block = "".join(f"{session}\t{seq}\t{kind}\t{text}\n" for session, seq, kind, text in rows)
    return block.replace("\\", "\\\\")
