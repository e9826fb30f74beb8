from __future__ import annotations

import pytest

from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures for the browser tests)
from tests.members import member, project_token


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("alice"))  # no password: hashing one takes a second


@pytest.fixture
def api(client, user):
    """A test client that authenticates with alice's API token."""
    _, token = project_token(user=user, name="tests")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


@pytest.fixture(params=[pytest.param("full"), pytest.param("embedded", marks=pytest.mark.embedded)])
def database(request):
    """Each test runs once per mode: PostgreSQL in the full run, SQLite in the embedded one."""
    return request.param
