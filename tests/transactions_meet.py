"""Two transactions made to meet on a lock: the first holds its locks until
the second is seen waiting for one (in pg_stat_activity), then commits.
For races that a test must not leave to timing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psycopg
from django.db import DatabaseError, connection, transaction

from tests.conftest import database_url


def transactions_meet(first: Callable[[], object], second: Callable[[], object], waiting_query: str) -> tuple:
    """Run `first` in a transaction that holds its locks until `second` (on
    another connection, in the transactions it opens) is seen waiting for a lock in a query
    like `waiting_query` (a LIKE pattern), then commit it. The outcomes of
    both: what each returned, or the database error `second` raised."""
    url = database_url(connection.settings_dict)
    holding, release = threading.Event(), threading.Event()

    def run_first() -> object:
        try:
            with transaction.atomic():
                outcome = first()
                holding.set()
                release.wait(60)
            return outcome
        finally:
            connection.close()

    def run_second() -> object:
        try:
            return second()  # in its own transaction(s)
        except DatabaseError as exc:
            return exc
        finally:
            connection.close()

    waiting = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock' AND query LIKE %s"
    )
    with psycopg.connect(url, autocommit=True) as watcher, ThreadPoolExecutor(max_workers=2) as pool:
        done_first = pool.submit(run_first)
        assert holding.wait(60)
        done_second = pool.submit(run_second)
        while watcher.execute(waiting, [waiting_query]).fetchone() == (0,):
            assert not done_second.done(), done_second.result()
            time.sleep(0.02)
        release.set()
        return done_first.result(timeout=60), done_second.result(timeout=60)
