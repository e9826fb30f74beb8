"""The tuning job's Celery task: a thin interface to the service.

Acknowledged late and rejected (so redelivered) when its worker dies: the
redelivery, under the same task id, takes the job over once it is stale
(`tuning_job_claim`); the lab's sweep re-queues it if the task is lost."""

from __future__ import annotations

from celery import shared_task

from .services import tuning_job_execute


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def tuning_job_run(self, job_id: int) -> None:
    tuning_job_execute(job_id=job_id, claim=self.request.id)
