"""The review tests' world: two reviewers and an admin, each with an API
client, and demo transcripts replayed through the default profile."""

from __future__ import annotations

import pytest
from django.test import Client

from loopguard_site.accounts.models import Role
from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Session
from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures for the browser tests)
from tests.members import member, project_token
from tests.site.replay.conftest import store_demo

TOOLS_LOOP = "loop-tools-readmediafile.jsonl"
REASONING_LOOP = "loop-reasoning-two-exits-riddle.jsonl"


def replayed(name: str, profile: str = "default") -> Session:
    session = store_demo(name)
    replay_session(session=session, profile_name=profile)
    return session


def token_client(user) -> Client:
    _, token = project_token(user=user, name="test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.fixture
def ann(django_user_model):
    return member(django_user_model.objects.create_user("ann"), Role.REVIEWER)


@pytest.fixture
def bob(django_user_model):
    return member(django_user_model.objects.create_user("bob"), Role.REVIEWER)


@pytest.fixture
def admin(django_user_model):
    return member(django_user_model.objects.create_user("root", is_staff=True))
