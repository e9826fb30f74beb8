"""Messages to a replay job's WebSocket group (`/ws/replays/<id>`).

The payloads are declared here, and `send_job_progress` is the only code
that calls the channel layer for replays; the consumer forwards what it gets.
"""

from __future__ import annotations

import logging
from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .models import ReplayJob

logger = logging.getLogger(__name__)


class JobProgress(TypedDict):
    """A job's counters, as `GET /api/replays/<id>` answers them."""

    id: int
    state: str
    done: int
    failed: int
    total: int


def job_group(job_id: int) -> str:
    return f"replay.job.{job_id}"


def job_progress(job: ReplayJob) -> JobProgress:
    return {"id": job.pk, "state": job.state, "done": job.done, "failed": job.failed, "total": job.total}


def send_job_progress(job: ReplayJob) -> None:
    """Tell every socket watching the job its current counters. Best effort:
    the counters are stored already, and a page reads them when it connects,
    so a channel layer that is down must not fail the replay."""
    try:
        async_to_sync(get_channel_layer().group_send)(
            job_group(job.pk), {"type": "replay.progress", "progress": job_progress(job)}
        )
    except Exception:  # noqa: BLE001 - Redis down, a full channel: the message only
        logger.warning("replay %s: progress message not sent", job.pk, exc_info=True)
