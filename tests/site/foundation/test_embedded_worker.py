"""The embedded mode's Celery: a real worker thread on the memory:// broker
(not task_always_eager), as `loopguard lab` runs it."""

from __future__ import annotations

import pytest

from loopguard_site.celery import app
from loopguard_site.embedded_worker import EmbeddedWorker
from loopguard_site.health.tasks import ping
from loopguard_site.transcripts.services import session_create_from_events


@pytest.mark.embedded
@pytest.mark.django_db(transaction=True)
def test_it_runs_queued_tasks_on_the_worker_thread():
    session_create_from_events(title="one", model="m", source_format="events", parser_version="1", events=[])
    queued = ping.delay()
    state_before_the_worker = queued.state  # nothing ran it in the caller's thread

    worker = EmbeddedWorker(app, threads=2)
    worker.start()
    try:
        answers = [queued.get(timeout=30), ping.delay().get(timeout=30), ping.delay().get(timeout=30)]
    finally:
        worker.stop()

    assert app.conf.task_always_eager is False
    assert app.conf.broker_url == "memory://localhost/"
    assert state_before_the_worker == "PENDING"
    assert [(answer["pong"], answer["sessions"]) for answer in answers] == [(True, 1)] * 3
    assert not worker.running
