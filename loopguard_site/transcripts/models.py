from django.conf import settings
from django.core.files.storage import storages
from django.db import models
from django.urls import reverse

from loopguard_site.accounts.models import Project


class Tag(models.Model):
    """A label a user gives sessions at upload (`--tag`, the upload form)."""

    name = models.CharField(max_length=50, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Session(models.Model):
    """One transcript: an imported file or a live stream."""

    class State(models.TextChoices):
        STORED = "stored"
        LIVE = "live"
        LOOPING = "looping"
        STOPPED = "stopped"
        STALLED = "stalled"
        CLOSED = "closed"

    title = models.CharField(max_length=300)
    model = models.CharField(max_length=200, blank=True)
    source_format = models.CharField(max_length=32)
    parser_version = models.CharField(max_length=32, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    uploader = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="sessions")
    tags = models.ManyToManyField(Tag, blank=True, related_name="sessions")
    state = models.CharField(max_length=16, choices=State.choices, default=State.STORED, db_index=True)
    event_count = models.PositiveIntegerField(default=0)
    profile = models.CharField(max_length=100, blank=True, help_text="detector profile of a live session")

    class Meta:
        ordering = ["-created", "-id"]
        # The session list's sorts, each with the id that breaks its ties:
        # a keyset page walks one of these from its cursor.
        indexes = [
            models.Index(fields=["created", "id"], name="session_created_id"),
            models.Index(fields=["title", "id"], name="session_title_id"),
            models.Index(fields=["model", "id"], name="session_model_id"),
            models.Index(fields=["event_count", "id"], name="session_events_id"),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        """The session page (the timeline app's)."""
        return reverse("timeline:session_detail", args=[self.pk])

    def tag_names(self) -> list[str]:
        """Tag names, sorted (uses prefetched tags when the selector prefetched them)."""
        return sorted(tag.name for tag in self.tags.all())


class Event(models.Model):
    """One event of a session, exactly as event-format.md defines it (`data`),
    numbered from 1 in stream order."""

    # No index of its own: the unique (session, seq) index serves every
    # lookup by session, and one index less to maintain speeds up imports.
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=16)
    data = models.JSONField()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="event_unique_session_seq")]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.type}"


class SessionLayout(models.Model):
    """Where a long session's stored conversation layout stands (layout.py's
    `LayoutState`): its items are `SessionItem` rows. Kept for sessions of
    at least settings.LOOPGUARD_LAYOUT_MIN_EVENTS events, so that their page reads a window
    of events instead of all of them."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="layout")
    state = models.JSONField()

    def __str__(self) -> str:
        return f"layout of {self.session_id}"


class SessionItem(models.Model):
    """One item of a long session's conversation (layout.py's `LayoutItem`)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="items", db_index=False)
    index = models.PositiveIntegerField()
    seq = models.PositiveIntegerField()  # its first event
    kind = models.CharField(max_length=16)
    turn = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    position = models.PositiveBigIntegerField()
    reasoning = models.PositiveIntegerField()
    content = models.PositiveIntegerField()
    calls = models.PositiveIntegerField()
    t = models.FloatField(null=True)
    t_end = models.FloatField(null=True)
    text = models.TextField(blank=True)
    marks = models.JSONField(default=list)
    repeated = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "index"], name="item_unique_session_index")]
        # Which item holds a channel offset (or a tool call), and which an event.
        indexes = [
            models.Index(fields=["session", "kind", "start"], name="item_session_kind_start"),
            models.Index(fields=["session", "seq"], name="item_session_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}:{self.index} {self.kind}"


def raw_upload_storage():
    """Where raw uploads kept outside the database are (settings.STORAGES)."""
    return storages["raw_uploads"]


class RawUpload(models.Model):
    """The uploaded file, byte for byte, kept for download and re-import: in
    `content` (compressed as `content_encoding` says), or in `file` of the
    raw-upload storage (LOOPGUARD_RAW_STORAGE), as it came."""

    class Encoding(models.TextChoices):
        NONE = "", "none"
        ZLIB = "zlib", "zlib"

    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="raw_upload")
    filename = models.CharField(max_length=255)
    content = models.BinaryField(blank=True, default=b"")
    content_encoding = models.CharField(max_length=8, choices=Encoding.choices, blank=True, default=Encoding.NONE)
    file = models.FileField(storage=raw_upload_storage, max_length=300, blank=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64, db_index=True)

    def __str__(self) -> str:
        return self.filename
