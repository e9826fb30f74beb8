"""Shared fixtures and the two-mode policy of the suite.

./scripts/test runs pytest twice: the full mode (PostgreSQL, Redis; every test
not marked `embedded`) and the embedded mode (no REDIS_URL, SQLite; the tests
marked `embedded`). A test that needs a service fails when it is missing; it
never skips.
"""

from __future__ import annotations

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    from django.conf import settings

    if item.get_closest_marker("embedded") and not settings.LOOPGUARD_EMBEDDED:
        pytest.fail("an `embedded` test needs the embedded mode: unset REDIS_URL (./scripts/test does)", pytrace=False)


@pytest.fixture(scope="session")
def live_services(django_db_blocker) -> None:
    """Full mode: PostgreSQL and Redis must be configured and answer."""
    import redis
    from django.conf import settings
    from django.db import connection

    if settings.LOOPGUARD_EMBEDDED or connection.vendor != "postgresql":
        pytest.fail(
            "this test needs the full mode: DATABASE_URL=postgres://... and REDIS_URL=redis://... "
            f"(database: {connection.vendor}, REDIS_URL: {settings.REDIS_URL}); run ./scripts/test",
            pytrace=False,
        )
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {settings.REDIS_URL} does not answer: {exc}", pytrace=False)
    try:
        with django_db_blocker.unblock():
            connection.ensure_connection()
    except Exception as exc:  # noqa: BLE001 - any driver error means "unreachable"
        pytest.fail(f"PostgreSQL ({settings.DATABASES['default']['HOST']}) does not answer: {exc}", pytrace=False)
