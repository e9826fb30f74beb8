"""A long session's stored conversation layout (layout.py) as rows: one
`SessionItem` per item and the `SessionLayout` state, kept for sessions of
at least `LAYOUT_MIN_EVENTS` events, so that their page reads a few rows
and a window of events instead of laying out every event per request.

Written when a session's events are: at import (from the events in hand),
after live ingest's appends (extended by the new events alone), and by a
replay or a page that finds it missing or behind (sessions stored before
it existed). Read by ranges of items, by the item holding a channel offset
(one query for any number of points) and as counts per bin of the x axis
(the timeline's summary).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from django.db import connection
from django.db.models import Count, F, Max, Min, Sum, Value
from django.db.models.functions import Coalesce, Floor

from .layout import LayoutBuilder, LayoutItem, LayoutState
from .models import Session, SessionItem, SessionLayout
from .selectors import session_event_stream

LAYOUT_MIN_EVENTS = 2_000  # shorter sessions are laid out per request (a few ms)
_ITEM_FIELDS = tuple(f.name for f in fields(LayoutItem))
_UPDATED = ("end", "t_end", "marks", "repeated")  # what extending an item changes
POINTS_PER_QUERY = 2_000  # 4 parameters each: under SQLite's limit


def session_layouts_update(session_ids: Iterable[int]) -> None:
    """Bring the stored layouts of these sessions up to date with their
    events: built for a session that has reached `LAYOUT_MIN_EVENTS`,
    extended by the events stored after the last one laid out. Call inside
    the transaction that wrote the events."""
    session_ids = list(session_ids)
    if not session_ids:
        return
    long_sessions = Session.objects.filter(pk__in=session_ids, event_count__gte=LAYOUT_MIN_EVENTS)
    counts = dict(long_sessions.values_list("pk", "event_count"))
    states = {
        row.session_id: LayoutState.from_json(row.state)
        for row in SessionLayout.objects.filter(session_id__in=counts).select_for_update()
    }
    for session_id, count in counts.items():
        state = states.get(session_id, LayoutState())
        if state.seq >= count:
            continue
        last = layout_items(session_id, state.items - 1, state.items)[0] if state.items else None
        builder = LayoutBuilder(state, last)
        for seq, event in session_event_stream(session_id, after=state.seq):
            builder.feed(seq, event)
        _store(session_id, builder, extends=last is not None)


def session_layout_store(session_id: int, events: Sequence[dict]) -> None:
    """Store the layout of a new session from its events (seq 1..n) when it
    is long enough to keep one."""
    if len(events) < LAYOUT_MIN_EVENTS:
        return
    builder = LayoutBuilder()
    for seq, event in enumerate(events, start=1):
        builder.feed(seq, event)
    _store(session_id, builder, extends=False)


def _store(session_id: int, builder: LayoutBuilder, *, extends: bool) -> None:
    items = builder.items
    if extends:
        last, items = items[0], items[1:]
        SessionItem.objects.filter(session_id=session_id, index=last.index).update(
            **{name: getattr(last, name) for name in _UPDATED}
        )
    SessionItem.objects.bulk_create(
        [SessionItem(session_id=session_id, **{name: getattr(i, name) for name in _ITEM_FIELDS}) for i in items],
        batch_size=2_000,
    )
    SessionLayout.objects.update_or_create(session_id=session_id, defaults={"state": builder.state.to_json()})


def session_layout(session: Session) -> LayoutState | None:
    """The session's stored layout, brought up to date first when it is
    missing or behind its events; None for a session too short to keep one."""
    if session.event_count < LAYOUT_MIN_EVENTS:
        return None
    row = SessionLayout.objects.filter(session_id=session.pk).first()
    if row is None or row.state["seq"] < session.event_count:
        session_layouts_update([session.pk])
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


@dataclass(frozen=True, slots=True)
class Point:
    """A place to find: `offset` of a text channel, a tool-call index on
    `tools`, or an event's seq on `seq`. `after` (not on `seq`): where an
    item ends and the next of the channel begins, the earlier one."""

    kind: str
    offset: int
    after: bool = False


def layout_points(session_id: int, points: Sequence[Point]) -> list[LayoutItem | None]:
    """For each point, the stored item of its kind that holds it (the last
    one for a point past the kind's end; the first for one before its
    start; None: the session has no such item): one index probe a point,
    `POINTS_PER_QUERY` points a query."""
    found: list[LayoutItem | None] = []
    for first in range(0, len(points), POINTS_PER_QUERY):
        found += _points(session_id, points[first : first + POINTS_PER_QUERY])
    return found


def _points(session_id: int, points: Sequence[Point]) -> list[LayoutItem | None]:
    if not points:
        return []
    table = SessionItem._meta.db_table
    columns = ", ".join(f'i."{name}"' for name in _ITEM_FIELDS if name != "marks")
    values = ", ".join(["(%s, %s, %s, %s)"] * len(points))
    params: list = []
    for n, point in enumerate(points):
        params += [n, point.kind, point.offset, point.offset - 1 if point.after and point.offset > 0 else point.offset]
    # The item holding a point: the last of its kind starting at or before it,
    # else (a point before the kind's first item) the first.
    sql = f"""
        WITH q(n, kind, point, reach) AS (VALUES {values})
        SELECT q.n, {columns} FROM q JOIN {table} i ON i.id = COALESCE(
            (SELECT j.id FROM {table} j WHERE j.session_id = %s AND q.kind <> 'seq' AND j.kind = q.kind
             AND j.start <= q.reach ORDER BY j.start DESC LIMIT 1),
            (SELECT j.id FROM {table} j WHERE j.session_id = %s AND q.kind <> 'seq' AND j.kind = q.kind
             ORDER BY j.start LIMIT 1),
            (SELECT j.id FROM {table} j WHERE j.session_id = %s AND q.kind = 'seq' AND j.seq <= q.point
             ORDER BY j.seq DESC LIMIT 1))
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, session_id, session_id, session_id])
        rows = cursor.fetchall()
    names = [name for name in _ITEM_FIELDS if name != "marks"]
    found: list[LayoutItem | None] = [None] * len(points)
    for n, *values in rows:
        found[n] = LayoutItem(**dict(zip(names, values, strict=True)))
    return found


def layout_bins(session_id: int, *, axis: str, low: float, high: float, bins: int) -> list[dict]:
    """The items whose start lies in [low, high] of the x axis (`offset`:
    stream position; `time`: `t`), counted per kind in `bins` equal bins:
    `kind`, `bin`, `items`, `size` (characters or calls), `repeated`,
    `first` (the least start: character offset, call index, turn number in
    `turn`), `turn`, `x0` (the least x) and `x1` (the greatest x an item of it reaches)."""
    x = F("position") if axis == "offset" else Coalesce(F("t"), Value(0.0))
    x_end = F("position") + F("end") - F("start") if axis == "offset" else Coalesce(F("t_end"), Value(0.0))
    width = (high - low) / bins or 1
    rows = (
        SessionItem.objects.filter(session_id=session_id)
        .annotate(x=x)
        .filter(x__gte=low, x__lte=high)
        .annotate(bin=Floor((F("x") - Value(float(low))) / Value(float(width))))
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
