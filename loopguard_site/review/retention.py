"""Retention: deleting the sessions created before a cutoff (`loopguard
prune`), without long locks.

Sessions go in batches of `PRUNE_BATCH`, oldest id first. A batch's bulk,
its events, checkpoint evaluations and stored layout items, is deleted
first in statements of `ROW_DELETE_CHUNK` rows, each its own short
transaction; then the sessions
and what is left of them (detections, verdicts, runs, labels, the raw upload,
whose stored file goes once that commits) in one small transaction. A prune
stopped half-way leaves sessions that are still past the cutoff, which the
next prune deletes. Sessions still streaming (live, looping) are never
deleted.

It lives in review, the highest layer whose rows it reads (it may keep the
labelled sessions); every app's rows of a session go with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, QuerySet, Sum

from loopguard_site.replay.models import CheckpointEvaluation
from loopguard_site.transcripts.models import Event, RawUpload, Session, SessionItem

from .models import Adjudication, Label

log = logging.getLogger(__name__)

PRUNE_BATCH = 100  # sessions per batch
ROW_DELETE_CHUNK = 10_000  # event or checkpoint rows per DELETE
STREAMING = (Session.State.LIVE, Session.State.LOOPING)


@dataclass
class PruneOutcome:
    """What `sessions_prune` deleted (or, dry, would delete)."""

    sessions: int = 0
    events: int = 0
    raw_uploads: int = 0
    raw_bytes: int = 0
    kept_labelled: int = 0


def labelled(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """Those of `sessions` a reviewer labelled or adjudicated."""
    labels = Label.objects.filter(session=OuterRef("pk"))
    return sessions.filter(Exists(labels) | Exists(Adjudication.objects.filter(session=OuterRef("pk"))))


def prunable_sessions(*, before: datetime, keep_labelled: bool = False) -> QuerySet[Session]:
    """The sessions a prune deletes: created before `before`, not streaming,
    and (with `keep_labelled`) never labelled."""
    sessions = Session.objects.filter(created__lt=before).exclude(state__in=STREAMING)
    if keep_labelled:
        sessions = sessions.exclude(pk__in=labelled(sessions).values("pk"))
    return sessions


def sessions_prune(
    *,
    before: datetime,
    keep_labelled: bool = False,
    dry_run: bool = False,
    report: Callable[[str], None] = log.info,
) -> PruneOutcome:
    """Delete the `prunable_sessions` in batches (see the module), or with
    `dry_run` only count them; `report` gets one line per batch."""
    outcome = PruneOutcome()
    if keep_labelled:
        outcome.kept_labelled = labelled(prunable_sessions(before=before)).count()
    sessions = prunable_sessions(before=before, keep_labelled=keep_labelled)
    after = 0
    while batch := list(sessions.filter(pk__gt=after).order_by("pk").values_list("pk", "event_count")[:PRUNE_BATCH]):
        after = batch[-1][0]
        ids = [pk for pk, _ in batch]
        raw = RawUpload.objects.filter(session_id__in=ids).aggregate(count=Count("pk"), size=Sum("size"))
        if dry_run:
            events = sum(count for _, count in batch)
        else:
            events = _delete_in_chunks(Event.objects.filter(session_id__in=ids))
            _delete_in_chunks(CheckpointEvaluation.objects.filter(session_id__in=ids))
            _delete_in_chunks(SessionItem.objects.filter(session_id__in=ids))  # a long session's stored layout
            with transaction.atomic():
                RawUpload.objects.filter(session_id__in=ids).defer("content").delete()  # not its bytes into memory
                Session.objects.filter(pk__in=ids).delete()
        outcome.sessions += len(ids)
        outcome.events += events
        outcome.raw_uploads += raw["count"]
        outcome.raw_bytes += raw["size"] or 0
        done = "would delete" if dry_run else "deleted"
        report(
            f"{done} {len(ids)} sessions (ids {ids[0]}–{ids[-1]}): {events:,} events,"
            f" {raw['count']} raw uploads ({raw['size'] or 0:,} bytes)"
        )
    return outcome


def _delete_in_chunks(rows: QuerySet) -> int:
    """Delete `rows` (of a model nothing refers to) `ROW_DELETE_CHUNK` at a time."""
    deleted = 0
    while True:
        count, _ = rows.model.objects.filter(pk__in=rows.values("pk")[:ROW_DELETE_CHUNK]).delete()
        deleted += count
        if count < ROW_DELETE_CHUNK:
            return deleted
