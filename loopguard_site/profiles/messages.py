"""Messages to a tuning job's WebSocket group (`/ws/tuning/<id>`), as the
replay app does it: the payload is declared here and `send_tuning_progress`
is the only code that calls the channel layer for tuning jobs."""

from __future__ import annotations

from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .models import TuningJob


class TuningProgress(TypedDict):
    id: int
    state: str
    done: int
    total: int


def tuning_group(job_id: int) -> str:
    return f"tuning.job.{job_id}"


def tuning_job_progress(job: TuningJob) -> TuningProgress:
    return {"id": job.pk, "state": job.state, "done": job.done, "total": job.total}


def send_tuning_progress(job: TuningJob) -> None:
    """Tell every socket watching the job its current counters."""
    async_to_sync(get_channel_layer().group_send)(
        tuning_group(job.pk), {"type": "tuning.progress", "progress": tuning_job_progress(job)}
    )
