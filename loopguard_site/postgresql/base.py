"""Django's PostgreSQL backend with the process's connections bounded.

Every thread that reaches the database opens its own connection: Django's
ASGI handler gives each HTTP request a thread, channels' consumers theirs,
so 300 producers connecting at once opened 300 connections, up to the
server's limit ("too many clients"). Here a process holds at most
LOOPGUARD_DB_CONNECTIONS: a thread that would open one more waits (in its
own thread, never on the event loop) until another closes, up to
LOOPGUARD_DB_WAIT_SECONDS, then fails with OperationalError (a 503 at the
edge). Connections still close as Django closes them (CONN_MAX_AGE = 0: at
the end of each request, socket handler or task), so a slot is held for the
length of one piece of synchronous work. A cap rather than a pool: no new
dependency, and nothing to keep open between requests."""

from __future__ import annotations

import threading
import weakref

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base

_slots: threading.Semaphore | None = None
_slots_lock = threading.Lock()


def connection_slots() -> threading.Semaphore:
    """The process's semaphore of LOOPGUARD_DB_CONNECTIONS slots."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(settings.LOOPGUARD_DB_CONNECTIONS)
        return _slots


class _Slot:
    """One taken slot, given back once (closed, or the wrapper collected)."""

    def __init__(self, slots: threading.Semaphore):
        self._slots = slots
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._slots.release()


class DatabaseWrapper(base.DatabaseWrapper):
    _slot: _Slot | None = None

    def get_new_connection(self, conn_params):
        slots = connection_slots()
        if not slots.acquire(timeout=settings.LOOPGUARD_DB_WAIT_SECONDS):
            raise psycopg.OperationalError(
                f"no database connection free within {settings.LOOPGUARD_DB_WAIT_SECONDS} s "
                f"(LOOPGUARD_DB_CONNECTIONS={settings.LOOPGUARD_DB_CONNECTIONS} in this process)"
            )
        slot = _Slot(slots)
        try:
            connection = super().get_new_connection(conn_params)
        except BaseException:
            slot.release()
            raise
        self._give_back()
        self._slot = slot
        weakref.finalize(self, slot.release)  # a thread that ends without closing leaks no slot
        return connection

    def _close(self):
        try:
            super()._close()
        finally:
            self._give_back()

    def _give_back(self) -> None:
        if self._slot is not None:
            self._slot.release()
            self._slot = None
