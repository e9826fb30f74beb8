from django.db import models

from loopguard_site.accounts.models import Project
from loopguard_site.transcripts.models import Session


class TraceSession(models.Model):
    """The live session the spans of one OpenTelemetry trace go into, and
    what the span reader keeps between two exports of the trace."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    trace_id = models.CharField(max_length=64)
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="otlp_trace")
    origin = models.FloatField(null=True, help_text="seconds since the epoch the events' `t` count from")
    unanswered = models.JSONField(default=list, help_text="tool calls of LLM spans no tool span answered yet")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "trace_id"], name="otlp_trace_unique_project_trace")]

    def __str__(self) -> str:
        return f"trace {self.trace_id}"
