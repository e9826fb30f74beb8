"""The tuning job's Celery task: a thin interface to the service."""

from __future__ import annotations

from celery import shared_task

from .services import tuning_job_execute


@shared_task(acks_late=True, reject_on_worker_lost=True)
def tuning_job_run(job_id: int) -> None:
    tuning_job_execute(job_id=job_id)
