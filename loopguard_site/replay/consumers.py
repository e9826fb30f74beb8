"""`/ws/replays/<id>`: a replay job's progress, live (loopguard_site.jobs)."""

from __future__ import annotations

from loopguard_site.jobs import JobProgressConsumer

from .messages import job_group, job_progress
from .selectors import replay_job_for


class ReplayJobConsumer(JobProgressConsumer):
    job_for = staticmethod(replay_job_for)
    group_of = staticmethod(job_group)
    progress_of = staticmethod(job_progress)
