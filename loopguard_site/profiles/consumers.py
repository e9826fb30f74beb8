"""`/ws/tuning/<id>`: a tuning job's progress, live (loopguard_site.jobs)."""

from __future__ import annotations

from loopguard_site.jobs import JobProgressConsumer

from .messages import tuning_group, tuning_job_progress
from .selectors import tuning_job_for


class TuningJobConsumer(JobProgressConsumer):
    job_for = staticmethod(tuning_job_for)
    group_of = staticmethod(tuning_group)
    progress_of = staticmethod(tuning_job_progress)
