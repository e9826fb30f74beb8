"""Reads of the session page: a session's streams, the profiles it was
replayed through, and that profile's detections and checkpoint evaluations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Q, QuerySet
from django.db.models.fields.json import KeyTextTransform

from detector import TEXT_CHANNELS
from loopguard_site.replay.models import CheckpointEvaluation, Detection, ReplayRun, SessionVerdict
from loopguard_site.replay.selectors import (
    profile_names,
    session_detections,
    sessions_by_results,
    sessions_with_verdicts,
)
from loopguard_site.review.models import LabelKind
from loopguard_site.review.selectors import sessions_by_label, sessions_with_label_kinds
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.selectors import DEFAULT_SORT, SESSION_SORTS, sessions_matching, sessions_with_ids

from .streams import SessionStreams, streams_from_events

EVENT_CHUNK = 2000  # events read per database round trip


# The events a window of one channel needs: its text, or the tool calls with
# their results and turns (stream positions are then meaningless: the other
# channels' text is not read).
WINDOW_EVENT_TYPES = {
    "reasoning": ("reasoning",),
    "content": ("content",),
    "tools": ("turn", "tool_call", "tool_result"),
}


def session_streams(session: Session, *, channel: str | None = None) -> SessionStreams:
    """The session's events laid out by streams.py, read in seq order; with
    `channel`, only the events a window of that channel needs."""
    events = Event.objects.filter(session=session)
    if channel is not None:
        events = events.filter(type__in=WINDOW_EVENT_TYPES[channel])
    return streams_from_events(_layout_events(events))


# The fields of an event streams.py reads. The database extracts them, so
# that a 100,000-event session is not decoded from JSON whole in Python.
LAYOUT_FIELDS = ("text", "name", "args", "id", "ok", "output", "t", "reason")


def _layout_events(events: QuerySet[Event]) -> Iterator[tuple[int, dict]]:
    fields = {f"field_{name}": KeyTextTransform(name, "data") for name in LAYOUT_FIELDS}
    rows = events.annotate(**fields).order_by("seq").values_list("seq", "type", *fields)
    for seq, kind, text, name, args, call_id, ok, output, t, reason in rows.iterator(chunk_size=EVENT_CHUNK):
        if kind in TEXT_CHANNELS or kind == "user":
            event = {"type": kind, "text": text or ""}
        elif kind == "finish":
            event = {"type": kind, "reason": reason or ""}
        elif kind == "tool_call":
            event = {"type": kind, "name": name, "args": json.loads(args) if args else {}, "id": call_id}
        elif kind == "tool_result":
            # PostgreSQL gives a JSON boolean as "true"/"false", SQLite as 1/0.
            event = {"type": kind, "id": call_id, "ok": ok is None or ok in (True, 1, "true"), "output": output or ""}
        else:
            event = {"type": kind}
        if t is not None:
            event["t"] = float(t)
        yield seq, event


def session_profiles(session_id: int) -> list[str]:
    """Profiles with results for the session (a finished replay, detections
    or checkpoint evaluations): the built-in ones in their order, then the
    others by name."""
    names = set(
        ReplayRun.objects.filter(session_id=session_id, state=ReplayRun.State.DONE).values_list("profile", flat=True)
    )
    names.update(Detection.objects.filter(session_id=session_id).values_list("profile", flat=True))
    names.update(CheckpointEvaluation.objects.filter(session_id=session_id).values_list("profile", flat=True))
    builtin = [name for name in profile_names() if name in names]
    return builtin + sorted(names - set(builtin))


# What the page shows of a detection (`message` and `extra` it leaves to the API).
PAGE_FIELDS = ("id", "detector", "type", "channel", "start", "end", "at", "unit", "period", "repeats", "action")


def session_detection_rows(
    *, session_id: int, profile: str, channel: str | None = None, start: int = 0, end: int | None = None
) -> list[dict]:
    """The profile's detections in firing order, each with `event_seq` and
    the fields of `PAGE_FIELDS` (plain dicts: a session may have tens of
    thousands). With `channel`, only that channel's detections whose region
    or firing point meets [start, end]. No profile, no detections."""
    if not profile:
        return []
    detections = session_detections(session_id=session_id, profile=profile)
    if channel is not None:
        detections = detections.filter(Q(end__gte=start) | Q(at__gte=start), channel=channel)
        if end is not None:
            detections = detections.filter(start__lte=end)
    return list(detections.values(*PAGE_FIELDS, "event_seq"))


def session_checkpoint_rows(*, session_id: int, profile: str) -> list[dict]:
    """The profile's checkpoint evaluations in the order they were recorded."""
    rows = CheckpointEvaluation.objects.filter(session_id=session_id, profile=profile).order_by("event_seq", "id")
    return [
        {
            "detector": row.detector,
            "channel": row.channel,
            "checkpoint": row.checkpoint,
            "start": row.start,
            "end": row.end,
            "check": row.check_name,
            "result": row.result,
            "turn": row.turn,
            "event_seq": row.event_seq,
        }
        for row in rows
    ]


PAGE_SIZE = 50  # sessions per page of the list and of GET /api/sessions


def session_list(
    *,
    among: QuerySet[Session] | None = None,
    project: int | None = None,
    model: str = "",
    source_format: str = "",
    tag: str = "",
    state: str = "",
    has_detections: bool | None = None,
    q: str = "",
    sort: str = DEFAULT_SORT,
    profile: str = "",
    verdict: str = "",
    detector: str = "",
    detection_type: str = "",
    label: str = "",
    created: date | None = None,
    live: bool = False,
) -> QuerySet[Session]:
    """The session list: sessions of `among` (a user's:
    `transcripts.selectors.sessions_visible_to`; None: every session)
    matching every filter given (empty means any), sorted by `sort`. The
    session's own fields as `transcripts.selectors.sessions_matching` reads
    them; `has_detections`, `verdict`, `detector` and `detection_type` under
    `profile` as `replay.selectors.sessions_by_results` does; `label` as
    `review.selectors.sessions_by_label`. Pages of it: `session_page`, which
    reads each row's verdicts and label kinds."""
    sessions = sessions_matching(
        among=among,
        project=project,
        model=model,
        source_format=source_format,
        tag=tag,
        state=state,
        q=q,
        created=created,
        live=live,
        sort=sort,
    )
    sessions = sessions_by_results(
        sessions,
        has_detections=has_detections,
        profile=profile,
        verdict=verdict,
        detector=detector,
        detection_type=detection_type,
    )
    return sessions_by_label(sessions, label)


@dataclass(frozen=True)
class Cursor:
    """A place in a sorted session list: the sort key's value and the id
    of the row a page ends at (`after=`) or starts at (`before=`)."""

    value: str | int | datetime
    id: int

    def token(self) -> str:
        """As links carry it: `value,id` (the value's own commas stay: the
        id is after the last one)."""
        value = self.value.isoformat() if isinstance(self.value, datetime) else self.value
        return f"{value},{self.id}"


END = "end"  # `before=end`: the last page


def cursor_from_token(token: str, sort: str) -> Cursor:
    """The cursor a link's `value,id` names for `sort`; ValueError if it is
    not one."""
    value, comma, pk = token.rpartition(",")
    if not comma or not pk.isdigit():
        raise ValueError("not value,id")
    field = SESSION_SORTS[sort.removeprefix("-")]
    if field == "created":
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            raise ValueError("a time without its UTC offset")
        return Cursor(moment, int(pk))
    if field == "event_count":
        if not value.isdigit():
            raise ValueError("an event count is a whole number")
        return Cursor(int(value), int(pk))
    return Cursor(value, int(pk))


# Sessions a list counts at most: counting every match of a filter reads
# them all (hundreds of ms at 100,000 sessions); beyond, the page says "more than 1,000".
COUNT_LIMIT = 1_000


@dataclass(frozen=True)
class SessionPage:
    """One page of a session list: its sessions (verdicts, tags and label
    kinds read for them alone), the cursors of the pages before and after it
    (None at either end) and how many sessions the whole list has, counted
    up to `COUNT_LIMIT` (`total_capped`: there are more)."""

    sessions: list[Session]
    previous: Cursor | None
    next: Cursor | None
    total: int
    total_capped: bool = False


def session_page(
    sessions: QuerySet[Session],
    *,
    sort: str = DEFAULT_SORT,
    size: int,
    after: Cursor | None = None,
    before: Cursor | str | None = None,
    total: bool = True,
) -> SessionPage:
    """The `size` sessions of `sessions` (a `session_list`, sorted by
    `sort`) that follow `after`, or precede `before` (`END`: the last page),
    or the first ones. Keyset pagination: the page's ids are read by walking
    the sort's (value, id) order from the cursor, so a deep page costs what
    the first one does (a short page back at the start is the first page);
    only then are that page's rows read with their verdicts, tags, label
    kinds and scan state. `total=False` leaves the count out (0)."""
    descending = sort.startswith("-")
    field = SESSION_SORTS[sort.removeprefix("-")]
    backwards = before is not None
    walk_descending = descending != backwards
    keys = sessions.values_list(field, "id")
    cursor = before if isinstance(before, Cursor) else after
    if cursor is not None:
        keys = keys.filter(_beyond(field, cursor, descending=walk_descending))
    sign = "-" if walk_descending else ""
    found = list(keys.order_by(f"{sign}{field}", f"{sign}id")[: size + 1])
    more, found = len(found) > size, found[:size]
    if backwards and not more and len(found) < size:  # back at the start: show the first page whole
        return session_page(sessions, sort=sort, size=size, total=total)
    if backwards:
        found.reverse()
    ends = (Cursor(*found[0]), Cursor(*found[-1])) if found else (None, None)
    earlier = more if backwards else cursor is not None
    later = isinstance(before, Cursor) if backwards else more
    counted = sessions.order_by()[: COUNT_LIMIT + 1].count() if total else 0
    return SessionPage(
        sessions=_page_rows([pk for _, pk in found]),
        previous=ends[0] if earlier else None,
        next=ends[1] if later else None,
        total=min(counted, COUNT_LIMIT),
        total_capped=counted > COUNT_LIMIT,
    )


def _beyond(field: str, cursor: Cursor, *, descending: bool) -> Q:
    """The rows after `cursor` in (field, id) order. The first, redundant
    bound lets the database start its index scan at the cursor."""
    way = "lt" if descending else "gt"
    past = Q(**{f"{field}__{way}": cursor.value}) | Q(**{field: cursor.value, f"id__{way}": cursor.id})
    return Q(**{f"{field}__{way}e": cursor.value}) & past


def _page_rows(ids: list[int]) -> list[Session]:
    """The sessions `ids`, in that order, each with its verdicts (by
    profile), tags, `scanning` (a replay of it is queued or running) and its
    label kinds (`labelled_*`): each layer reads its own for this page alone."""
    if not ids:
        return []
    rows = sessions_with_label_kinds(sessions_with_verdicts(sessions_with_ids(ids)))
    by_id = {session.pk: session for session in rows}
    return [by_id[pk] for pk in ids]


@dataclass(frozen=True)
class SessionRow:
    """What the session list shows of a session beyond its own fields."""

    session: Session
    state: str  # scanned-loop, scanned-clean, scanning, not scanned, live, live · looping, live · stalled, stopped
    state_badge: str  # the badge's CSS modifier (UI_CONTRACT.md)
    verdicts: list[SessionVerdict]  # the session's own scan profile first
    labels: list[str]  # label kinds on the session or its detections, in LabelKind order


_LIVE_STATES = {
    Session.State.LIVE: ("live", "badge-live"),
    Session.State.LOOPING: ("live · looping", "badge-loop"),
    Session.State.STALLED: ("live · stalled", "badge-warn"),
    Session.State.STOPPED: ("stopped", "badge-warn"),
}


def session_row(session: Session, profile: str = "") -> SessionRow:
    """A session of a `session_page` (its verdicts prefetched, its label kinds
    annotated) as the list shows it; `profile` as the list's filter gives it.
    The scan state reads that profile's verdict, else the session's own
    profile's, else any: a loop under any of them makes it scanned-loop."""
    verdicts = list(session.verdicts.all())
    chosen = profile or session.profile
    verdicts.sort(key=lambda v: v.profile != chosen)
    ruling = [v for v in verdicts if v.profile == chosen] or (verdicts if not profile else [])
    if session.state in _LIVE_STATES:
        state, badge = _LIVE_STATES[session.state]
    elif any(v.looped for v in ruling):
        state, badge = "scanned-loop", "badge-loop"
    elif ruling:
        state, badge = "scanned-clean", "badge-clean"
    elif getattr(session, "scanning", False):
        state, badge = "scanning", "badge-muted"
    else:
        state, badge = "not scanned", "badge-muted"
    labels = [kind for kind in LabelKind.values if getattr(session, f"labelled_{kind}", False)]
    return SessionRow(session=session, state=state, state_badge=badge, verdicts=verdicts, labels=labels)
