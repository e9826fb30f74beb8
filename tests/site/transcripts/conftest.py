from __future__ import annotations

import pytest

from loopguard_site.accounts.services import api_token_create
from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures for the browser tests)


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice")  # no password: hashing one takes a second


@pytest.fixture
def api(client, user):
    """A test client that authenticates with alice's API token."""
    _, token = api_token_create(user=user, name="tests")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client
