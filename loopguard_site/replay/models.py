"""Replay jobs and their results.

Results are per session × profile: a replay of a session through a profile
replaces that pair's `Detection` and `CheckpointEvaluation` rows, so a
re-run (or a task redelivered after a worker died) leaves no duplicates.
`ReplayRun` holds the job's bookkeeping for one pair and the summary of its
last replay.
"""

from django.conf import settings
from django.db import models

from loopguard_site.accounts.models import Project
from loopguard_site.transcripts.models import Session


class ReplayState(models.TextChoices):
    """The states of a job and of each of its runs."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ReplayJob(models.Model):
    """Sessions × profiles replayed together; its counters drive the progress bar."""

    State = ReplayState

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="replay_jobs")  # its sessions'
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    profiles = models.JSONField(default=list, help_text="profile names, in the order asked")
    selection = models.JSONField(
        default=dict, help_text='what was picked: {"sessions": [ids]} or {"all": true, "filter": {...}}'
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED, db_index=True)
    total = models.PositiveIntegerField(default=0, help_text="runs (sessions × profiles)")
    done = models.PositiveIntegerField(default=0, help_text="runs finished, failed ones included")
    failed = models.PositiveIntegerField(default=0)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"replay {self.pk} ({self.state})"


class ReplayRun(models.Model):
    """One session through one profile within a job, and its summary."""

    State = ReplayState

    job = models.ForeignKey(ReplayJob, on_delete=models.CASCADE, related_name="runs")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="replay_runs")
    profile = models.CharField(max_length=100)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED, db_index=True)
    attempts = models.PositiveIntegerField(default=0, help_text="times a worker claimed it")
    # The Celery task id that claimed it: a redelivery or retry of that same
    # task may claim it again (its worker died), any other task may not.
    claimed_by = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Summary of the replay (null/empty when no detector fired).
    detection_count = models.PositiveIntegerField(default=0)
    first_detection_at = models.BigIntegerField(null=True, blank=True, help_text="`at` of the first detection to fire")
    first_detection_start = models.BigIntegerField(
        null=True, blank=True, help_text="`start` of the first detection: where the loop began"
    )
    first_detection_channel = models.CharField(max_length=16, blank=True)
    first_detection_detector = models.CharField(max_length=64, blank=True)
    first_detection_type = models.CharField(max_length=64, blank=True)
    first_detection_seq = models.PositiveIntegerField(null=True, blank=True, help_text="event that fired it")
    spent_after_loop = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="characters (tool calls on the tools channel) of the first detection's channel "
        "from its `start` to the end of the session: what the loop cost unguarded",
    )

    class Meta:
        ordering = ["job", "id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "session", "profile"], name="replayrun_unique_job_session_profile")
        ]

    def __str__(self) -> str:
        return f"run {self.pk}: session {self.session_id} × {self.profile} ({self.state})"


class SessionVerdict(models.Model):
    """What the latest scan of a session through a profile found, kept up to
    date by every writer of that pair's detections (replay and live ingest), so
    lists and dashboards read one row per session × profile instead of
    aggregating detections per request."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="verdicts")
    profile = models.CharField(max_length=100)
    looped = models.BooleanField(db_index=True, help_text="a detector fired")
    detection_count = models.PositiveIntegerField(default=0)
    first_detection_id = models.BigIntegerField(null=True, blank=True, help_text="pk of the first Detection row")
    first_detection_seq = models.PositiveIntegerField(null=True, blank=True)
    first_detection_channel = models.CharField(max_length=16, blank=True)
    first_detection_detector = models.CharField(max_length=64, blank=True)
    first_detection_type = models.CharField(max_length=64, blank=True)
    first_detection_start = models.BigIntegerField(null=True, blank=True)
    first_detection_at = models.BigIntegerField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        ordering = ["session", "profile"]
        constraints = [
            models.UniqueConstraint(fields=["session", "profile"], name="sessionverdict_unique_session_profile")
        ]
        indexes = [models.Index(fields=["profile", "looped"], name="verdict_profile_looped")]

    def __str__(self) -> str:
        return f"session {self.session_id} × {self.profile}: {'loop' if self.looped else 'clean'}"


class Detection(models.Model):
    """A detection as event-format.md defines it, stored for a session × profile.
    `run` is the replay that produced it (null for detections from other sources)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="detections")
    profile = models.CharField(max_length=100)
    run = models.ForeignKey(ReplayRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="detections")
    event_seq = models.PositiveIntegerField(help_text="seq of the event whose feed fired it")
    detector = models.CharField(max_length=64)
    type = models.CharField(max_length=64)
    channel = models.CharField(max_length=16)
    start = models.BigIntegerField()
    end = models.BigIntegerField()
    at = models.BigIntegerField()
    unit = models.TextField()
    period = models.PositiveIntegerField()
    repeats = models.PositiveIntegerField()
    action = models.CharField(max_length=16)
    message = models.TextField()
    turn = models.PositiveIntegerField(default=0)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["session", "profile", "event_seq", "id"]
        indexes = [models.Index(fields=["session", "profile", "event_seq"], name="detection_session_profile")]

    def __str__(self) -> str:
        return f"{self.detector} on {self.channel} {self.start}-{self.end} (session {self.session_id})"


class CheckpointEvaluation(models.Model):
    """One evaluation by a checkpoint-style detector (seed 000), loop or not."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="checkpoint_evaluations")
    profile = models.CharField(max_length=100)
    run = models.ForeignKey(
        ReplayRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="checkpoint_evaluations"
    )
    event_seq = models.PositiveIntegerField(help_text="seq of the event whose feed recorded it")
    detector = models.CharField(max_length=64)
    channel = models.CharField(max_length=16)
    checkpoint = models.BigIntegerField()
    start = models.BigIntegerField()
    end = models.BigIntegerField()
    # `check` of the Checkpoint record; renamed because Model.check() is Django's system check.
    check_name = models.CharField(max_length=64)
    result = models.CharField(max_length=64, blank=True, help_text='the detection type found, "" for no loop')
    turn = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["session", "profile", "event_seq", "id"]
        indexes = [models.Index(fields=["session", "profile", "event_seq"], name="checkpoint_session_profile")]

    def __str__(self) -> str:
        return f"{self.detector} checkpoint {self.checkpoint} (session {self.session_id})"
