"""Stored per-model profiles, versioned, and the tuning jobs that propose them.

A `ProfileVersion` holds a complete profile table (every enabled detector
with all its parameters, as `detector.Profile.to_dict` writes it), so a
version never changes when built-in defaults do; saving or importing a
profile adds a version, it never edits one.
"""

import json

from django.conf import settings
from django.db import models

from loopguard_site.accounts.models import Project


class TuningJob(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # whose labelled sessions it tunes on
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="tuning_jobs")
    created = models.DateTimeField(auto_now_add=True)
    model_glob = models.CharField(
        max_length=200, help_text="sessions whose model matches one of these comma-separated globs are tuned on"
    )
    base_profile = models.CharField(max_length=100)
    fp_budget = models.PositiveIntegerField(default=0, help_text="labelled clean sessions it may flag")
    folds = models.PositiveSmallIntegerField(default=5, help_text="cross-validation folds, 2-10")
    max_evaluations = models.PositiveIntegerField(default=600, help_text="candidates scored per search")
    time_limit = models.PositiveIntegerField(default=600, help_text="seconds for the whole job")
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED, db_index=True)
    done = models.PositiveIntegerField(default=0, help_text="candidates scored")
    total = models.PositiveIntegerField(default=0)
    sessions = models.PositiveIntegerField(default=0, help_text="labelled sessions used")
    labels = models.JSONField(default=list, blank=True, help_text="ids of the review labels it tuned on")
    result = models.JSONField(null=True, blank=True, help_text="TuningResult.to_dict()")
    error = models.TextField(blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Crashed jobs finish: the Celery task running the job (a redelivery of
    # it has the same id), how many times one started it, and when it last
    # showed progress (a job quiet for LOOPGUARD_JOB_STALE_SECONDS is re-run).
    claimed_by = models.CharField(max_length=255, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    heartbeat = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"tuning {self.pk} of {self.base_profile} for {self.model_glob} ({self.state})"

    @property
    def globs(self) -> list[str]:
        return [glob.strip() for glob in self.model_glob.split(",") if glob.strip()]

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.FAILED, self.State.CANCELLED)


class ProfileVersion(models.Model):
    """A version of a stored profile. The profile belongs to one project,
    the only one that sees and replays it; its name is unique in the lab all
    the same, so a detection's `profile` names one table wherever it is read."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="profile_versions")
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    # JSON text, not a JSONField: PostgreSQL's jsonb does not keep key order,
    # and the order of a profile's detectors is the order they report in.
    table_json = models.TextField(help_text="the profile's table in a config file (models, description, detectors)")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)
    tuning_job = models.ForeignKey(TuningJob, null=True, blank=True, on_delete=models.SET_NULL)
    origin = models.CharField(max_length=16, help_text='"tuning" or "import"')

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="profileversion_unique_name_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def table(self) -> dict:
        return json.loads(self.table_json)

    @property
    def models(self) -> list[str]:
        return self.table.get("models", [])
