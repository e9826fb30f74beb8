"""The ingest side of a live session: what was acknowledged and the
detectors' state between messages.

The Monitor is pickled here after every message, in the transaction that
stores the message's events, so the next message — over a reconnected socket
or an HTTP batch served by another process — continues exactly where the last
one stopped (detectors are plain objects with bounded memory, so the blob
stays small). The blob is written only by `live_ingest`, never by a client.
"""

from django.db import models

from loopguard_site.transcripts.models import Session


class LiveStream(models.Model):
    session = models.OneToOneField(Session, primary_key=True, on_delete=models.CASCADE, related_name="live_stream")
    acked_seq = models.PositiveIntegerField(default=0, help_text="seq of the last message stored and acknowledged")
    monitor = models.BinaryField(null=True, blank=True, help_text="the pickled detector Monitor after that message")
    last_event_at = models.DateTimeField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"live stream of session {self.session_id} (ack {self.acked_seq})"
