"""Celery tasks of replay jobs: thin interfaces to the services.

Both are acknowledged late and rejected (so redelivered) when their worker
dies: a session task (a chunk of sessions) that ran halfway runs again under
the same task id, re-claims its runs and replaces their results, so nothing
is doubled. A
database outage is retried with backoff, under the same task id too.
"""

from __future__ import annotations

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError

from .services import replay_job_enqueue_chunk, replay_job_sessions_execute, replay_session_runs_abandon


class SessionRunsTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        # Out of retries (or a bug): fail the session's runs rather than leave
        # them running forever, so the job still finishes.
        job_id, session_ids = args
        for session_id in session_ids:
            replay_session_runs_abandon(
                job_id=job_id, session_id=session_id, claim=task_id, error=f"{type(exc).__name__}: {exc}"
            )


RELIABLE = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "max_retries": 5,
}


@shared_task(**RELIABLE)
def replay_job_dispatch(self, job_id: int, after_session_id: int = 0) -> None:
    # Session tasks follow the dispatcher onto the queue it was sent to.
    queue = (self.request.delivery_info or {}).get("routing_key")
    replay_job_enqueue_chunk(job_id=job_id, after_session_id=after_session_id, queue=queue)


@shared_task(base=SessionRunsTask, **RELIABLE)
def replay_session_runs(self, job_id: int, session_ids: list[int]) -> None:
    replay_job_sessions_execute(job_id=job_id, session_ids=session_ids, claim=self.request.id)
