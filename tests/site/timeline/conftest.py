"""The session page tests' world: demo transcripts imported through the
transcripts service and replayed through the replay service, and a
logged-in browser client."""

from __future__ import annotations

import pytest

from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_import_file
from tests.shared_paths import REPO_ROOT

DEMO_DIR = REPO_ROOT / "fixtures" / "demo"
REASONING_LOOP = "loop-reasoning-two-exits-riddle.jsonl"
TOOLS_LOOP = "loop-tools-readmediafile.jsonl"


def replayed_demo(name: str, profiles: tuple[str, ...] = ("default",)) -> Session:
    """A demo file imported as an upload is, then replayed through `profiles`."""
    session = session_import_file(data=(DEMO_DIR / name).read_bytes(), filename=name)
    for profile in profiles:
        replay_session(session=session, profile_name=profile)
    return session


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("reviewer")


@pytest.fixture
def browser_client(client, user):
    client.force_login(user)
    return client
