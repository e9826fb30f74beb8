"""The session page tests' world: demo transcripts imported through the
transcripts service and replayed through the replay service, and a
logged-in browser client."""

from __future__ import annotations

import pytest

from detector.importers import parse_path
from detector.monitor import Monitor
from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_import_file
from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures of the browser tests)
from tests.members import member
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


def monitor_results(name: str, profile: str) -> tuple[list[dict], list[dict]]:
    """What the detector library itself finds in a demo file: detections
    and checkpoint evaluations, each with the seq of the event that fed it."""
    monitor = Monitor(profile)
    detections, checkpoints = [], []
    for seq, event in enumerate(parse_path(DEMO_DIR / name, "events").events, start=1):
        detections += [d.to_dict() | {"event_seq": seq} for d in monitor.feed(event)]
        checkpoints += [c.to_dict() | {"event_seq": seq} for c in monitor.take_checkpoints()]
    return detections, checkpoints


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("reviewer"))


@pytest.fixture
def browser_client(client, user):
    client.force_login(user)
    return client
