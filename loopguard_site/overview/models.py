"""Running totals the overview reads instead of aggregating every session,
verdict, detection and label per request (issue 21 item 4: at 100,000
sessions those aggregates take a second). On PostgreSQL, triggers
(migrations/0001_tallies.py) keep them up to date in the same transaction as
every write of the rows they count, whoever writes them; the embedded
(SQLite) lab aggregates its small tables directly (selectors.py)."""

from django.db import models


class ModelTally(models.Model):
    """Per project × session model × profile: with `profile` "", the
    sessions and their session labels; with a profile, the verdicts under it
    and the labels of its detections."""

    project_id = models.BigIntegerField()
    model = models.CharField(max_length=200)
    profile = models.CharField(max_length=100)
    sessions = models.BigIntegerField(default=0)
    scanned = models.BigIntegerField(default=0, help_text="sessions with a verdict")
    looped = models.BigIntegerField(default=0, help_text="of them, those a detector fired on")
    detections = models.BigIntegerField(default=0, help_text="SessionVerdict.detection_count summed")
    labels = models.BigIntegerField(default=0, help_text="reviewers' labels")
    labelled = models.BigIntegerField(default=0, help_text="distinct (session, item) labelled")
    true_loop = models.BigIntegerField(default=0)
    false_positive = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project_id", "model", "profile"], name="modeltally_unique_key")]


class DetectionDayTally(models.Model):
    """Detections per project × UTC day their session was created × detector × type."""

    project_id = models.BigIntegerField()
    day = models.DateField()
    detector = models.CharField(max_length=64)
    type = models.CharField(max_length=64)
    detections = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project_id", "day", "detector", "type"], name="detectiondaytally_unique_key"
            )
        ]
