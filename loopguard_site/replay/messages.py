"""Messages to a replay job's WebSocket group (`/ws/replays/<id>`).

The payloads are declared here, and `send_job_progress` is the only code
that sends replay messages (through loopguard_site.jobs); the consumer
forwards what it gets.
"""

from __future__ import annotations

from typing import TypedDict

from loopguard_site.jobs import send_job_progress_to

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
    """Tell every socket watching the job its current counters (best effort)."""
    send_job_progress_to(job_group(job.pk), job_progress(job))
