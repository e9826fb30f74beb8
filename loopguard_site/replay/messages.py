"""Messages to a replay job's WebSocket group (`/ws/replays/<id>`).

The payloads are declared here, and `send_job_progress` is the only code
that calls the channel layer for replays; the consumer forwards what it gets.
"""

from __future__ import annotations

from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .models import ReplayJob


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
    """Tell every socket watching the job its current counters."""
    async_to_sync(get_channel_layer().group_send)(
        job_group(job.pk), {"type": "replay.progress", "progress": job_progress(job)}
    )
