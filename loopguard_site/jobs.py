"""What replay and tuning jobs share: their finished states, when one is
stale (its tasks lost with a broker, or its worker killed) and who re-queues
it, a job's counters sent to the sockets watching it (best effort), and the
consumer of such a socket (`/ws/replays/<id>`, `/ws/tuning/<id>`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from functools import partial

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404

from loopguard_site.accounts.access import CLOSE_UNAUTHENTICATED, close_code, socket_refuse

logger = logging.getLogger(__name__)

# A job in one of these states is over: nothing runs it or will.
FINISHED_STATES = ("done", "failed", "cancelled")


def job_stale_cutoff(now: datetime) -> datetime:
    """A queued or running job that showed no progress since this moment
    is stale (LOOPGUARD_JOB_STALE_SECONDS before `now`)."""
    return now - timedelta(seconds=settings.LOOPGUARD_JOB_STALE_SECONDS)


def job_requeue_claim(kind: str, job_id: int, created: datetime) -> bool:
    """True for the one caller that may re-queue this stale job now: at most
    once per stale period, whatever the number of lab processes sweeping
    (a cache key taken with `add`)."""
    key = f"lg:{kind}-requeued:{job_id}:{created.timestamp()}"
    return cache.add(key, 1, settings.LOOPGUARD_JOB_STALE_SECONDS)


def jobs_requeue(
    kind: str, stale: Iterable[tuple[int, datetime]], reset: Callable[[int], object], enqueue: Callable[[int], object]
) -> list[int]:
    """Re-queue each stale job `(id, created)` that this caller may take
    (`job_requeue_claim`): `reset` puts its unfinished work back to queued,
    and `enqueue` sends its tasks once that has committed. The ids re-queued."""
    requeued = []
    for job_id, created in stale:
        if not job_requeue_claim(kind, job_id, created):
            continue  # another process (or an earlier sweep) did it
        with transaction.atomic():
            reset(job_id)
            transaction.on_commit(partial(enqueue, job_id))
        requeued.append(job_id)
    return requeued


def send_job_progress_to(group: str, progress: Mapping) -> None:
    """Tell every socket of `group` a job's current counters. Best effort:
    the counters are stored already, and a page reads them when it connects,
    so a channel layer that is down must not fail the job."""
    try:
        async_to_sync(get_channel_layer().group_send)(group, {"type": "job.progress", "progress": dict(progress)})
    except Exception:  # noqa: BLE001 - Redis down, a full channel: the message only
        logger.warning("%s: progress message not sent", group, exc_info=True)


class JobProgressConsumer(AsyncJsonWebsocketConsumer):
    """A job's progress, live: authenticates, checks the user may see the
    job (`job_for`, an accounts.access getter: close 4404 for a job not in
    their projects), sends its counters once, then forwards every progress
    message of its group. Subclasses name the three functions."""

    job_for: Callable  # (user, job_id) -> job, or Http404 / PermissionDenied
    group_of: Callable[[int], str]  # job id -> channel group
    progress_of: Callable  # job -> counters, as the group's messages carry them

    async def connect(self) -> None:
        user = self.scope["user"]
        if not user.is_authenticated:
            await socket_refuse(self, CLOSE_UNAUTHENTICATED)
            return
        job_id = self.scope["url_route"]["kwargs"]["job_id"]
        self.group = type(self).group_of(job_id)
        # Join first, then read the snapshot: no progress can fall between them.
        await self.channel_layer.group_add(self.group, self.channel_name)
        try:
            job = await database_sync_to_async(type(self).job_for)(user, job_id)
        except (Http404, PermissionDenied) as refusal:
            await socket_refuse(self, close_code(refusal))
            return
        await self.accept()
        await self.send_json(type(self).progress_of(job))

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_progress(self, message: dict) -> None:
        await self.send_json(message["progress"])
