"""The proxy tests' client: a member of the default project, and its API token."""

from __future__ import annotations

import pytest

from tests.members import member, project_token


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("client"))


@pytest.fixture
def token(user) -> str:
    return project_token(user=user, name="proxy tests")[1]
