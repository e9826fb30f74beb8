from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from .models import Event, RawUpload, Session

EVENT_BATCH = 2000  # rows per INSERT: large sessions are stored in a few round trips


@transaction.atomic
def session_create_from_events(
    *,
    title: str,
    model: str,
    source_format: str,
    parser_version: str,
    events: Sequence[dict],
    raw: bytes | None = None,
    filename: str = "",
    uploader: AbstractBaseUser | None = None,
    tags: Iterable[str] = (),
) -> Session:
    """Store a session with its events (already validated, in stream order)
    and, when given, the raw upload — all of it or, on any error, nothing."""
    session = Session.objects.create(
        title=title,
        model=model,
        source_format=source_format,
        parser_version=parser_version,
        uploader=uploader,
        tags=list(tags),
        event_count=len(events),
    )
    for start in range(0, len(events), EVENT_BATCH):
        Event.objects.bulk_create(
            Event(session=session, seq=seq, type=event["type"], data=event)
            for seq, event in enumerate(events[start : start + EVENT_BATCH], start=start + 1)
        )
    if raw is not None:
        RawUpload.objects.create(
            session=session, filename=filename, content=raw, size=len(raw), sha256=hashlib.sha256(raw).hexdigest()
        )
    return session
