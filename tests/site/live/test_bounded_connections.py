"""A lab process holds at most LOOPGUARD_DB_CONNECTIONS PostgreSQL
connections, whatever the number of sockets and requests at once: 30
producers connecting together and 40 concurrent API requests against a lab
capped at 3 all succeed, with nothing lost, and no more than 3 of its
connections (4 with one closing) are ever seen by the server; uncapped it
opened one per socket and request."""

from __future__ import annotations

import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.db import connection

from detector.live_client import LiveSession
from loopguard_site.transcripts.models import Event
from tests.conftest import database_url

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 3


class ConnectionCounter:
    """Samples the server's count of the lab's connections (by application_name)."""

    def __init__(self, url: str, name: str):
        self.url, self.name = url, name
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as watcher:
            while not self._stop.is_set():
                (count,) = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (self.name,)
                ).fetchone()
                self.most = max(self.most, count)
                time.sleep(0.01)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.most


def test_sockets_and_requests_at_once_stay_within_the_processs_connections(lab, producer):
    url = database_url(connection.settings_dict)
    name = f"lg-bounded-{uuid.uuid4().hex[:8]}"
    server = lab(DATABASE_URL=f"{url}?application_name={name}", LOOPGUARD_DB_CONNECTIONS=str(CAP))
    counter = ConnectionCounter(url, name)

    def produce(n: int) -> int:
        live = LiveSession(server.url, producer.token, transport="ws", window=4)
        for seq in range(1, 6):
            live.send({"type": "content", "text": f"producer {n} message {seq}. "})
        live.flush()
        live.disconnect()
        return live.session_id

    def ask(_: int) -> int:
        request = urllib.request.Request(
            f"{server.url}/api/sessions", headers={"Authorization": f"Bearer {producer.token}"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status

    with ThreadPoolExecutor(max_workers=70) as pool:
        producers = [pool.submit(produce, n) for n in range(30)]
        requests = [pool.submit(ask, n) for n in range(40)]
        try:
            sessions = [each.result(timeout=120) for each in producers]
            statuses = [each.result(timeout=120) for each in requests]
        except Exception as exc:
            raise AssertionError("\n".join(server.output[-20:])) from exc
    most = counter.stop()

    assert statuses == [200] * 40
    for n, session_id in enumerate(sessions):
        texts = list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data__text", flat=True))
        assert texts == [f"producer {n} message {seq}. " for seq in range(1, 6)]
    # a backend the lab just closed lingers a moment in pg_stat_activity while
    # the next one starts: the server may see one more than the lab holds
    assert 1 <= most <= CAP + 1
