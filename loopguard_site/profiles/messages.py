"""Messages to a tuning job's WebSocket group (`/ws/tuning/<id>`), as the
replay app does it: the payload is declared here and `send_tuning_progress`
is the only code that sends tuning messages (through loopguard_site.jobs)."""

from __future__ import annotations

from typing import TypedDict

from loopguard_site.jobs import send_job_progress_to

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
    """Tell every socket watching the job its current counters (best effort)."""
    send_job_progress_to(tuning_group(job.pk), tuning_job_progress(job))
