"""A long session's stored conversation layout (layout.py) as rows: one
`SessionItem` per item and the `SessionLayout` state, kept for sessions of
at least `layout_min_events()` events, so that their page reads a few rows
and a window of events instead of laying out every event per request.

Derived data, so not written at import (laying out costs more CPU than
the import itself): built by the scan every import queues (a replay builds
the layout of a session stored without one), by a page that finds it
missing or behind first, and extended by the new events alone after live
ingest's appends (once in a while: `live.services.layout_due`). Read by
ranges of items, by the item holding a channel offset (one query for any
number of points) and as counts per bin of the x axis (the timeline's
summary).
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, FloatField, Max, Min, Sum, Value
from django.db.models.functions import Coalesce, Floor

from .layout import LayoutBuilder, LayoutItem, LayoutState
from .models import Session, SessionItem, SessionLayout
from .selectors import session_event_stream


def layout_min_events() -> int:
    """Sessions shorter than this are laid out per request (a few ms); settings.LOOPGUARD_LAYOUT_MIN_EVENTS."""
    return settings.LOOPGUARD_LAYOUT_MIN_EVENTS


_ITEM_FIELDS = tuple(f.name for f in fields(LayoutItem))
_UPDATED = ("end", "t_end", "marks", "repeated")  # what extending an item changes
SQLITE_PARAMETERS = 30_000  # per statement: under SQLite's limit of 32,766


def session_layouts_update(sessions: Iterable[Session], built: Mapping[int, LayoutBuilder] | None = None) -> None:
    """Bring the stored layouts of these sessions up to date with their
    events: built for a session that has reached `layout_min_events()`,
    extended by the events stored after the last one laid out (shorter
    sessions are passed over without a query). `built`: layouts the caller
    laid out from events it read anyway (a replay), by session id, taken
    for a session with no stored layout and extended by any events stored
    since. Call inside the transaction that wrote the events."""
    session_ids = sorted({session.pk for session in sessions if session.event_count >= layout_min_events()})
    if session_ids:
        with transaction.atomic():  # a page's first view calls it outside one
            _layouts_update(session_ids, built or {})


def sessions_without_layout(sessions: Iterable[Session]) -> set[int]:
    """The ids of those of `sessions` long enough to keep a layout that have
    none stored yet (no query when none is long enough)."""
    long_ids = {session.pk for session in sessions if session.event_count >= layout_min_events()}
    if not long_ids:
        return set()
    return long_ids - set(SessionLayout.objects.filter(session_id__in=long_ids).values_list("session_id", flat=True))


def _layouts_update(session_ids: list[int], built: Mapping[int, LayoutBuilder]) -> None:
    # The sessions locked in id order, as a replay's writer locks them: a
    # page's first view and the scan may build the same layout at once.
    long_sessions = (
        Session.objects.filter(pk__in=session_ids, event_count__gte=layout_min_events())
        .select_for_update()
        .order_by("pk")
    )
    counts = dict(long_sessions.values_list("pk", "event_count"))
    states = {
        row.session_id: LayoutState.from_json(row.state)
        for row in SessionLayout.objects.filter(session_id__in=counts).select_for_update()
    }
    for session_id, count in counts.items():
        state = states.get(session_id)
        if state is None and session_id in built:
            builder, last = built[session_id], None
        else:
            state = state or LayoutState()
            if state.seq >= count:
                continue
            last = layout_items(session_id, state.items - 1, state.items)[0] if state.items else None
            builder = LayoutBuilder(state, last)
        if builder.state.seq < count:  # (a layout built by the caller is usually whole)
            for seq, event in session_event_stream(session_id, after=builder.state.seq):
                builder.feed(seq, event)
        _store(session_id, builder, extends=last is not None)


def _store(session_id: int, builder: LayoutBuilder, *, extends: bool) -> None:
    items = builder.items
    if extends:
        last, items = items[0], items[1:]
        SessionItem.objects.filter(session_id=session_id, index=last.index).update(
            **{name: getattr(last, name) for name in _UPDATED}
        )
    _items_insert(session_id, items)
    SessionLayout.objects.update_or_create(session_id=session_id, defaults={"state": builder.state.to_json()})


def _items_insert(session_id: int, items: list[LayoutItem]) -> None:
    """Insert items as rows: through COPY on PostgreSQL, multi-row INSERTs
    on SQLite (`bulk_create` builds a model instance a row: most of the time)."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in ("session_id", *_ITEM_FIELDS))
    table = quote(SessionItem._meta.db_table)
    rows = [
        [session_id, *(json.dumps(item.marks) if name == "marks" else getattr(item, name) for name in _ITEM_FIELDS)]
        for item in items
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        per_insert = SQLITE_PARAMETERS // (len(_ITEM_FIELDS) + 1)
        for first in range(0, len(rows), per_insert):
            batch = rows[first : first + per_insert]
            values = ", ".join(["(" + ", ".join(["%s"] * len(batch[0])) + ")"] * len(batch))
            cursor.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", [v for row in batch for v in row])


def session_layout(session: Session) -> LayoutState | None:
    """The session's stored layout, brought up to date first when it is
    missing or behind its events; None for a session too short to keep one."""
    if session.event_count < layout_min_events():
        return None
    row = SessionLayout.objects.filter(session_id=session.pk).first()
    if row is None or row.state["seq"] < session.event_count:
        session_layouts_update([session])
        row = SessionLayout.objects.get(session_id=session.pk)
    return LayoutState.from_json(row.state)


def layout_items(session_id: int, start: int, end: int) -> list[LayoutItem]:
    """Items [start, end) of the session's stored layout."""
    rows = SessionItem.objects.filter(session_id=session_id, index__gte=start, index__lt=end).order_by("index")
    return [LayoutItem(**values) for values in rows.values(*_ITEM_FIELDS)]


def item_events_end(session_id: int, index: int) -> int | None:
    """The last event of items before `index`: the seq before item `index`
    starts (None past the last item: every event to the end)."""
    seq = SessionItem.objects.filter(session_id=session_id, index=index).values_list("seq", flat=True).first()
    return None if seq is None else seq - 1


class Point(NamedTuple):  # a tuple: thousands are hashed per page
    """A place to find: `offset` of a text channel, a tool-call index on
    `tools`, or an event's seq on `seq`. `after` (not on `seq`): where an
    item ends and the next of the channel begins, the earlier one."""

    kind: str
    offset: int
    after: bool = False


@dataclass(frozen=True, slots=True)
class Place:
    """What the page needs of the item holding a point."""

    index: int
    start: int
    size: int
    position: int
    t: float | None


PROBES_PER_QUERY = 200  # event seqs looked up by one statement


def layout_points(session_id: int, points: Sequence[Point]) -> list[Place | None]:
    """For each point, the stored item of its kind that holds it: the last
    one starting at or before it (the first for a point before the kind's
    first item; None: the session has no item of that kind). The items of
    each channel asked about are read once, as columns (a few bytes an
    item: cheaper than one index probe a point when the points are many);
    event seqs, rarer, are probed."""
    columns: dict[str, tuple[list, list]] = {}
    table = SessionItem._meta.db_table
    with connection.cursor() as cursor:
        for kind in sorted({point.kind for point in points} - {"seq"}):
            cursor.execute(
                f'SELECT start, "index", "end", position, t FROM {table} WHERE session_id = %s AND kind = %s'
                " ORDER BY start",
                [session_id, kind],
            )
            places = cursor.fetchall()
            columns[kind] = ([place[0] for place in places], places)
    seqs = _seq_places(session_id, sorted({point.offset for point in points if point.kind == "seq"}))
    found: list[Place | None] = []
    for point in points:
        if point.kind == "seq":
            found.append(seqs.get(point.offset))
            continue
        starts, places = columns[point.kind]
        if not starts:
            found.append(None)
            continue
        reach = point.offset - 1 if point.after and point.offset > 0 else point.offset
        start, index, end, position, t = places[max(bisect_right(starts, reach) - 1, 0)]
        found.append(Place(index, start, end - start, position, t))
    return found


def _seq_places(session_id: int, seqs: list[int]) -> dict[int, Place]:
    """The item holding each event seq: one index probe each, `PROBES_PER_QUERY` to a statement."""
    table = SessionItem._meta.db_table
    probe = (
        f'SELECT * FROM (SELECT %s, "index", start, "end", position, t FROM {table}'
        " WHERE session_id = %s AND seq <= %s ORDER BY seq DESC LIMIT 1) AS probe"
    )
    found = {}
    for first in range(0, len(seqs), PROBES_PER_QUERY):
        chunk = seqs[first : first + PROBES_PER_QUERY]
        with connection.cursor() as cursor:
            cursor.execute(
                " UNION ALL ".join([probe] * len(chunk)), [v for seq in chunk for v in (seq, session_id, seq)]
            )
            for seq, index, start, end, position, t in cursor.fetchall():
                found[seq] = Place(index, start, end - start, position, t)
    return found


def layout_bins(session_id: int, *, axis: str, low: float, high: float, bins: int) -> list[dict]:
    """The items whose start lies in [low, high] of the x axis (`offset`:
    stream position; `time`: `t`), counted per kind in `bins` equal bins:
    `kind`, `bin`, `items`, `size` (characters or calls), `repeated`,
    `first` (the least start: character offset, call index, turn number in
    `turn`), `turn`, `x0` (the least x) and `x1` (the greatest x an item of it reaches)."""
    if axis == "offset":  # whole numbers: integer arithmetic, several times faster than the database's decimals
        low, high = math.floor(low), math.ceil(high)
        x, x_end = F("position"), F("position") + F("end") - F("start")
        slot = (F("x") - Value(low)) * Value(bins) / Value(max(high - low, 1))
    else:
        x, x_end = Coalesce(F("t"), Value(0.0)), Coalesce(F("t_end"), Value(0.0))
        slot = Floor((F("x") - Value(float(low))) * Value(bins / ((high - low) or 1)), output_field=FloatField())
    rows = (
        SessionItem.objects.filter(session_id=session_id)
        .annotate(x=x)
        .filter(x__gte=low, x__lte=high)
        .annotate(bin=slot)
        .values("kind", "bin")
        .annotate(
            items=Count("id"),
            size=Sum(F("end") - F("start")),
            repeated=Sum("repeated"),
            first=Min("start"),
            turn=Min("turn"),
            x0=Min("x"),
            x1=Max(x_end),
        )  # fmt: skip
        .order_by("kind", "bin")
    )
    return [{**row, "bin": min(int(row["bin"]), bins - 1)} for row in rows]
