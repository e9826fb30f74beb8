"""Reviewers' labels and admins' adjudications (see truth.py for what they mean).

A label belongs to one item of a session: a detection, keyed by its
signature (`item`, with the signature's fields kept for queries), or the
session itself (`item` = "session"). Each reviewer has one current label
per item: labelling again replaces it. The detection row is referenced
while it exists; a re-run of the replay replaces rows but not findings, so
the label stays with the signature.
"""

from django.conf import settings
from django.db import models

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session


class LabelKind(models.TextChoices):
    TRUE_LOOP = "true_loop"
    FALSE_POSITIVE = "false_positive"
    MISSED_LOOP = "missed_loop"
    CLEAN = "clean"


class Label(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="review_labels")
    item = models.CharField(max_length=200, help_text='"session", or the detection signature')
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_labels")
    label = models.CharField(max_length=16, choices=LabelKind.choices)
    note = models.TextField(blank=True)
    detection = models.ForeignKey(Detection, null=True, blank=True, on_delete=models.SET_NULL, related_name="labels")
    profile = models.CharField(max_length=100, blank=True, help_text="profile of the labelled detection")
    detector = models.CharField(max_length=64, blank=True, help_text='"" for a session label')
    detection_type = models.CharField(max_length=64, blank=True)
    channel = models.CharField(max_length=16, blank=True, help_text="of the detection, or of a missed loop")
    start = models.BigIntegerField(null=True, blank=True)
    end = models.BigIntegerField(null=True, blank=True)
    at = models.BigIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, help_text="when this reviewer last (re)labelled the item")

    class Meta:
        ordering = ["session", "item", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "item", "reviewer"], name="label_one_per_reviewer_item")
        ]
        indexes = [models.Index(fields=["session", "reviewer", "detector", "start"], name="label_review_lookup")]

    def __str__(self) -> str:
        return f"{self.label} on {self.item} of session {self.session_id} by {self.reviewer_id}"


class Adjudication(models.Model):
    """An admin's final label for an item the reviewers disagree on."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="adjudications")
    item = models.CharField(max_length=200)
    label = models.CharField(max_length=16, choices=LabelKind.choices)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["session", "item"]
        constraints = [models.UniqueConstraint(fields=["session", "item"], name="adjudication_one_per_item")]

    def __str__(self) -> str:
        return f"{self.label} on {self.item} of session {self.session_id} (adjudicated)"
