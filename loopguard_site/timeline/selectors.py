"""Reads of the session page: a session's streams, the profiles it was
replayed through, and that profile's detections and checkpoint evaluations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

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
from loopguard_site.transcripts.selectors import DEFAULT_SORT, sessions_matching

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
    `review.selectors.sessions_by_label`. Each row carries its verdicts
    (prefetched, by profile), `scanning` (a replay of it is queued or
    running) and its label kinds (`labelled_*`)."""
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
    ).select_related("uploader", "project")
    sessions = sessions_by_results(
        sessions.prefetch_related("tags"),
        has_detections=has_detections,
        profile=profile,
        verdict=verdict,
        detector=detector,
        detection_type=detection_type,
    )
    return sessions_with_label_kinds(sessions_with_verdicts(sessions_by_label(sessions, label)))


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
    """A row of `session_list` (its verdicts prefetched, its label kinds
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
