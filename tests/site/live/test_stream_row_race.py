"""A session's LiveStream row is created by whichever transaction first
locks a session that has none (the first ingest, or a sweep). One that waited
for the session's lock must find the row the other created meanwhile:
PostgreSQL re-checks only the locked session row after the wait, so the
`LEFT JOIN`ed stream still read as missing and both inserted it (an
`IntegrityError` on live_livestream_pkey, 8 times in the connect storm of
BENCHMARKS.md section 8). Here the two transactions are made to meet: the
first holds the lock, the ingest is seen waiting for it, then the first
commits."""

from __future__ import annotations

import pytest

from loopguard_site.live.models import LiveStream
from loopguard_site.live.services import _locked_stream, live_ingest
from loopguard_site.transcripts.models import Event
from tests.transactions_meet import transactions_meet

pytestmark = pytest.mark.django_db(transaction=True)

CONTENT = {"type": "content", "text": "after the wait"}


def test_an_ingest_that_waited_for_the_lock_finds_the_stream_created_meanwhile(live_services, live_session):
    _, ack = transactions_meet(
        lambda: _locked_stream(live_session.pk),  # creates the LiveStream row, holds the session's lock
        lambda: live_ingest(session_id=live_session.pk, seq=1, events=[CONTENT]).ack,
        "%FOR UPDATE OF m%",
    )

    assert ack == 1
    assert list(Event.objects.filter(session=live_session).values_list("seq", "data")) == [(1, CONTENT)]
    assert list(LiveStream.objects.filter(session=live_session).values_list("acked_seq", flat=True)) == [1]
