from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    """What a member may do in a project; each role may do all the lower ones do."""

    VIEWER = "viewer"  # read sessions, detections, labels, profiles, jobs
    REVIEWER = "reviewer"  # and label, import and stream sessions, run replays
    ADMIN = "admin"  # and adjudicate, save profiles, tune, manage members and API tokens


ROLE_RANK = {Role.VIEWER: 1, Role.REVIEWER: 2, Role.ADMIN: 3}


class Project(models.Model):
    """A set of sessions (with their detections and labels), stored profiles,
    jobs and API tokens that only its members reach."""

    name = models.CharField(max_length=100, unique=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)

    class Meta:
        ordering = ["project", "user"]
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_one_per_user_project")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.project}"


class ApiToken(models.Model):
    """A bearer token for the API, ingest and import of one project. Only its
    SHA-256 is stored; the plaintext is shown once, when it is created. It
    acts with its creator's current role in its project, and reaches no other."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=12, editable=False, help_text="the token's first characters, to recognise it")
    created = models.DateTimeField(auto_now_add=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
