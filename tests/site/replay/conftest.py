"""The replay tests' small world: demo transcripts stored as sessions, what
`loopguard scan --json` says about them, and an API client with a token."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from detector.importers import parse_path
from detector.monitor import Monitor
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures)
from tests.members import member, project_token
from tests.shared_paths import REPO_ROOT

DEMO_DIR = REPO_ROOT / "fixtures" / "demo"
DEMO_FILES = sorted(path.name for path in DEMO_DIR.glob("*.jsonl"))
PROFILES = ("default", "seed000", "gemini", "preview")
LOOPGUARD = Path(sys.executable).with_name("loopguard")  # the installed console script


def store_demo(name: str, *, tags: tuple[str, ...] = ()) -> Session:
    """A demo file stored as the lab stores an upload."""
    transcript = parse_path(DEMO_DIR / name, "events")
    return session_create_from_events(
        title=name,
        model=transcript.model or "",
        source_format=transcript.format,
        parser_version=transcript.parser_version,
        events=transcript.events,
        tags=tags,
    )


@functools.cache
def scan_json(name: str, profile: str) -> dict:
    """`loopguard scan --json --profile PROFILE` on a demo file, run as a real command."""
    result = subprocess.run(
        [str(LOOPGUARD), "scan", "--json", "--profile", profile, str(DEMO_DIR / name)],
        capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def scan_count(name: str, profile: str) -> int:
    """How many detections `loopguard scan` finds: the tests take counts from
    the detectors, which other work tunes, rather than writing them down."""
    return len(scan_json(name, profile)["detections"])


def first_firing_seq(name: str, profile: str) -> int | None:
    """The seq (from 1) of the event whose feed fired the profile's first
    detection on a demo file, straight from the detector library."""
    transcript = parse_path(DEMO_DIR / name, "events")
    monitor = Monitor(profile, model=transcript.model or "")
    for seq, event in enumerate(transcript.events, start=1):
        if monitor.feed(event):
            return seq
    return None


def profile_breaks(monkeypatch, profile: str, *, at_event: int) -> None:
    """Make the Monitors of `profile` raise RuntimeError("detector bug") on
    their event number `at_event` (from 1), as a detector bug would."""
    feed = Monitor.feed

    def breaking_feed(self, event):
        if self.profile.name == profile and self.ctx.events == at_event - 1:
            raise RuntimeError("detector bug")
        return feed(self, event)

    monkeypatch.setattr(Monitor, "feed", breaking_feed)


def stored_detections(session: Session, profile: str) -> list[dict]:
    """The stored detections as `loopguard scan --json` prints them (no id, no profile)."""
    from loopguard_site.replay.selectors import detection_to_dict, session_detections

    rows = [detection_to_dict(d) for d in session_detections(session_id=session.pk, profile=profile)]
    return [{k: v for k, v in row.items() if k not in ("id", "profile")} for row in rows]


@pytest.fixture
def user():
    return member(get_user_model().objects.create_user("owner"))


@pytest.fixture
def browser(user) -> Client:
    """The owner's logged-in browser, as the test client."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def api(user) -> Client:
    _, token = project_token(user=user, name="test")
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")
