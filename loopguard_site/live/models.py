"""The ingest side of a live session: what was acknowledged and the
detectors' state between messages.

The process that stores a session's messages keeps its Monitor in memory
(`live.services`), stamped with `revision`; every write of the detectors'
state (a stored message, a tick that fired) renews the stamp here, in the
transaction that makes it, so a process whose Monitor carries another stamp
knows that another process wrote meanwhile. The Monitor is pickled here
now and then (`monitor`, after `monitor_events` events: every few hundred
events, and whenever a detection fired or the session closed); a process
without the current Monitor unpickles it and feeds it the events stored
since, so the next message — over a reconnected socket or an HTTP batch
served by another process — continues exactly where the last one stopped.
The blob is written only by the live services, never by a client.
"""

from django.db import models

from loopguard_site.transcripts.models import Session


class LiveStream(models.Model):
    session = models.OneToOneField(Session, primary_key=True, on_delete=models.CASCADE, related_name="live_stream")
    acked_seq = models.PositiveIntegerField(default=0, help_text="seq of the last message stored and acknowledged")
    monitor = models.BinaryField(
        null=True, blank=True, help_text="the pickled detector Monitor, after monitor_events events"
    )
    monitor_events = models.PositiveIntegerField(default=0, help_text="how many events the pickled Monitor was fed")
    revision = models.BigIntegerField(
        default=0, help_text="a random stamp renewed by every write of the Monitor's state"
    )
    last_event_at = models.DateTimeField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"live stream of session {self.session_id} (ack {self.acked_seq})"
