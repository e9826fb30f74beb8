"""The daily quota of each API token (seed 003, layers 4 and 5), kept where
every lab process sees it: Django's cache (Redis in full mode; in embedded
mode the one lab process's memory).

A token may make LOOPGUARD_TOKEN_DAILY_QUOTA authenticated calls a UTC day,
JSON API, OpenAI-compatible proxy and live producer socket messages
together; past it the call is refused (429 over HTTP, an error message on a
socket). Its `Retry-After` follows the exponential backoff of detector/backoff.py (1, 2, 4, ... seconds for the
1st, 2nd, 3rd refusal of the day, no jitter: a client owns its key), and is
never later than the next midnight, when the quota starts afresh. The
counters are keyed by day, so nothing has to reset them; they expire after
two days.

The quota fails open: while the cache (Redis) is unreachable, calls are
allowed and not counted (a warning is logged), so that a Redis outage does
not take the API and live ingest down with it; the counting resumes with Redis.
"""

from __future__ import annotations

import datetime
import logging
import math

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest
from django.utils import timezone
from redis.exceptions import RedisError

from detector import backoff_seconds

from .auth import request_token_key

log = logging.getLogger(__name__)

KEEP_SECONDS = 2 * 24 * 3600
QUOTA_USED_UP = "this token's daily quota is used up (LOOPGUARD_TOKEN_DAILY_QUOTA)"


def _count(key: str, calls: int) -> int:
    """Add `calls` to a counter (created at 0) and return its new value.
    On Redis in one round trip (the cache's `add` and `incr` take three, two
    once the counter exists): the live ingest thread counts every batch, and
    each round trip it waits for costs it CPU (BENCHMARKS.md, section 4)."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        name = backend.make_and_validate_key(key)
        client = backend._cache.get_client(name, write=True)  # the cache's own connection pool
        # `add` (SET NX, as the cache stores an int: as it is) then the increment
        counting = client.pipeline(transaction=False).set(name, 0, ex=KEEP_SECONDS, nx=True).incrby(name, calls)
        return counting.execute()[1]
    try:
        return cache.incr(key, calls)  # the counter exists but for the day's first call
    except ValueError:
        cache.add(key, 0, KEEP_SECONDS)  # atomic on Redis: the first process creates it
        return cache.incr(key, calls)


def token_quota_take(*, token_key: str, now: datetime.datetime) -> int | None:
    """Count one call of the token `token_key`; None if the quota allows it,
    else the seconds the client should wait (`Retry-After`)."""
    return token_quota_take_many(token_key=token_key, calls=1, now=now)[1]


def token_quota_take_many(*, token_key: str, calls: int, now: datetime.datetime) -> tuple[int, int | None]:
    """Count `calls` calls of the token at once (one cache increment
    whatever their number): how many of them, the first ones, the quota
    allows, and for the others the seconds to wait (None if it allows all)."""
    day = now.astimezone(datetime.UTC).date()
    try:
        total = _count(f"lg:quota:{token_key}:{day.isoformat()}", calls)
    except RedisError as exc:  # fail open, see above
        log.warning("the quota counter is unreachable, %d calls allowed uncounted: %s", calls, exc)
        return calls, None
    allowed = max(0, min(calls, settings.LOOPGUARD_TOKEN_DAILY_QUOTA - (total - calls)))
    if allowed == calls:
        return calls, None
    try:
        refusals = _count(f"lg:quota-refused:{token_key}:{day.isoformat()}", calls - allowed)
    except RedisError:
        refusals = 1  # the counter went away meanwhile: the shortest wait
    midnight = datetime.datetime.combine(day + datetime.timedelta(days=1), datetime.time(), datetime.UTC)
    until_reset = (midnight - now).total_seconds()
    return allowed, max(1, math.ceil(min(backoff_seconds(refusals), until_reset)))


def request_quota_take(request: HttpRequest) -> int | None:
    """`token_quota_take` for the bearer token of a request that carries one."""
    return token_quota_take(token_key=request_token_key(request), now=timezone.now())
