"""A Celery round trip through a real worker process on Redis (full mode):
the task runs in `celery -A loopguard_site worker` and reads the test database."""

from __future__ import annotations

import pytest

from loopguard_site.health.tasks import ping
from loopguard_site.transcripts.services import session_create_from_events


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_task_in_a_separate_worker_process_on_redis(celery_worker_process):
    for title in ("first", "second"):
        session_create_from_events(title=title, model="m", source_format="events", parser_version="1", events=[])
    worker = celery_worker_process
    worker.start()

    answer = ping.apply_async(queue=worker.queue).get(timeout=60)
    status = worker.stop()

    assert answer == {"pong": True, "worker": worker.node, "sessions": 2}, worker.log.read_text()
    assert status == 0, worker.log.read_text()
