"""Reads of live sessions: the viewer's snapshot, the dashboard's rows and
the sessions the stalled sweep looks at (who may do what: accounts.access)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from loopguard_site.accounts.access import require_ingest
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.selectors import session_for

from .models import LiveStream
from .states import OPEN_STATES, Trigger, takes

SNAPSHOT_CHUNK = 1000  # events per `{"events": [...]}` message of a viewer's snapshot
DASHBOARD_LIMIT = 200


def session_to_ingest(user: AbstractBaseUser, session_id: int) -> Session:
    """The session `session_id` if `user` may stream events into it
    (accounts.access refuses otherwise: Http404 or PermissionDenied)."""
    session = session_for(user, session_id)
    require_ingest(user, session)
    return session


def acked_seq(session_id: int) -> int:
    return LiveStream.objects.filter(session_id=session_id).values_list("acked_seq", flat=True).first() or 0


def live_detections(session: Session, *, actions: tuple[str, ...] = ()) -> list[Detection]:
    """The session's detections of its own profile, in firing order."""
    detections = Detection.objects.filter(session=session, profile=session.profile)
    if actions:
        detections = detections.filter(action__in=actions)
    return list(detections.order_by("event_seq", "id"))


def event_chunks(session: Session) -> Iterator[list[dict]]:
    """Every stored event with its `seq`, in chunks of SNAPSHOT_CHUNK."""
    rows = Event.objects.filter(session=session).order_by("seq").values_list("seq", "data")
    chunk: list[dict] = []
    for seq, data in rows.iterator(chunk_size=SNAPSHOT_CHUNK):
        chunk.append({**data, "seq": seq})
        if len(chunk) == SNAPSHOT_CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def stalled_candidate_ids(cutoff: datetime) -> list[int]:
    """Sessions that can stall (live or looping) with no event (or, with
    none, no creation) since `cutoff`."""
    last = Coalesce(F("live_stream__last_event_at"), F("created"))
    sessions = Session.objects.filter(state__in=[state for state in Session.State if takes(state, Trigger.STALL)])
    return list(sessions.annotate(last=last).filter(last__lte=cutoff).order_by("pk").values_list("pk", flat=True))


def tick_candidate_ids() -> list[int]:
    """Open sessions that have stored an event (only those can have a `t`)."""
    sessions = Session.objects.filter(state__in=OPEN_STATES, live_stream__last_event_at__isnull=False)
    return list(sessions.order_by("pk").values_list("pk", flat=True))


def dashboard_rows(among: QuerySet[Session]) -> list[dict]:
    """Sessions of `among` (a user's: transcripts.selectors.sessions_visible_to)
    that were ever live (newest first): state, last event time, and their
    first detection (of the session's profile), for the dashboard."""
    first = Detection.objects.filter(session=OuterRef("pk"), profile=OuterRef("profile")).order_by("event_seq", "id")
    sessions = (
        among.filter(~Q(state=Session.State.STORED))
        .annotate(
            last_event_at=F("live_stream__last_event_at"),
            first_type=Subquery(first.values("type")[:1]),
            first_action=Subquery(first.values("action")[:1]),
            first_message=Subquery(first.values("message")[:1]),
        )
        .order_by("-created", "-id")[:DASHBOARD_LIMIT]
    )
    return [
        {
            "id": s.pk,
            "title": s.title,
            "model": s.model,
            "state": s.state,
            "events": s.event_count,
            "last_event": s.last_event_at.isoformat() if s.last_event_at else None,
            "first_detection": (
                {"type": s.first_type, "action": s.first_action, "message": s.first_message} if s.first_type else None
            ),
        }
        for s in sessions
    ]
