"""Login throttling: after LOOPGUARD_LOGIN_FAILURES_PER_ACCOUNT failed
sign-ins for one username, or LOOPGUARD_LOGIN_FAILURES_PER_ADDRESS from one
client address, further attempts (right password or not) are refused for
LOOPGUARD_LOGIN_LOCK_SECONDS (429 with Retry-After). Per account stops
guessing one password from many addresses; per address stops one client
trying many accounts. A successful sign-in clears its account's count.

Counters live in Django's cache (Redis in full mode: every lab process sees
them) and fail open while it is unreachable, as the API quota does. The
address is REMOTE_ADDR: behind a reverse proxy, that proxy's own limits
apply per client (README)."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


def _keys(username: str, address: str) -> list[tuple[str, int]]:
    return [
        (f"lg:login:account:{username.casefold()}", settings.LOOPGUARD_LOGIN_FAILURES_PER_ACCOUNT),
        (f"lg:login:address:{address}", settings.LOOPGUARD_LOGIN_FAILURES_PER_ADDRESS),
    ]


def login_wait(*, username: str, address: str) -> int | None:
    """Seconds before this username or address may try again; None: now."""
    try:
        locks = cache.get_many([f"{key}:until" for key, _ in _keys(username, address)])
    except RedisError as exc:
        log.warning("login throttling is unreachable, attempt allowed: %s", exc)
        return None
    until = max(locks.values(), default=None)
    if until is None or until <= time.time():
        return None
    return max(1, round(until - time.time()))


def login_failed(*, username: str, address: str) -> None:
    """Count a failed sign-in; a count reaching its limit locks for LOOPGUARD_LOGIN_LOCK_SECONDS."""
    lock = settings.LOOPGUARD_LOGIN_LOCK_SECONDS
    try:
        for key, limit in _keys(username, address):
            cache.add(key, 0, lock)
            if cache.incr(key) >= limit:
                cache.set(f"{key}:until", time.time() + lock, lock)
                cache.delete(key)
    except RedisError as exc:
        log.warning("login throttling is unreachable, failure not counted: %s", exc)


def login_succeeded(*, username: str) -> None:
    key, _ = _keys(username, "")[0]
    try:
        cache.delete(key)
    except RedisError:
        pass  # counted again from where it was: harmless
