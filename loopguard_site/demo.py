"""Demo data for `loopguard lab --demo`: the sessions in fixtures/demo/, in
the project "default", and an admin account `demo` (a superuser, and an
admin member of that project) with a fresh API token of it."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from detector.importers import parse_path
from loopguard_site.accounts.models import ApiToken, Project, Role
from loopguard_site.accounts.services import api_token_create, api_token_revoke, default_project, membership_set
from loopguard_site.replay.services import replay_job_create
from loopguard_site.transcripts.models import RawUpload
from loopguard_site.transcripts.services import session_create_from_events

DEMO_DIR = settings.BASE_DIR / "fixtures" / "demo"
DEMO_USERNAME = "demo"
DEMO_TOKEN_NAME = "demo"
DEMO_TAG = "demo"
# Replayed on load, so a newcomer sees detections at once and can compare designs.
DEMO_PROFILES = ["default", "seed000", "gemini"]


@dataclass(frozen=True)
class DemoResult:
    loaded: int  # sessions stored by this call
    present: int  # demo files already stored before
    token: str  # the demo admin's API token (plaintext, new on every call)
    password: str  # the demo admin's password (new on every call)
    replay_job: int | None  # the job replaying the sessions loaded now (None: nothing new)


def demo_sessions_load(*, uploader, project: Project, directory: Path = DEMO_DIR) -> tuple[list[int], int]:
    """Store each demo file not stored yet (same name and bytes); returns
    (ids of the sessions stored now, count already present)."""
    loaded: list[int] = []
    present = 0
    for path in sorted(directory.glob("*.jsonl")):
        raw = path.read_bytes()
        if RawUpload.objects.filter(filename=path.name, sha256=hashlib.sha256(raw).hexdigest()).exists():
            present += 1
            continue
        transcript = parse_path(path, "events")
        session = session_create_from_events(
            title=transcript.title or path.stem,
            model=transcript.model or "",
            source_format=transcript.format,
            parser_version=transcript.parser_version,
            events=transcript.events,
            raw=raw,
            filename=path.name,
            uploader=uploader,
            project=project,
            tags=[DEMO_TAG],
        )
        loaded.append(session.pk)
    return loaded, present


@transaction.atomic
def demo_load(*, directory: Path = DEMO_DIR) -> DemoResult:
    """The demo admin (created, or its password reset), its one live API token
    (earlier demo tokens revoked), the demo sessions, and a replay job for the
    sessions stored now (its tasks are queued once this transaction commits)."""
    user, _ = get_user_model().objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.is_staff = user.is_superuser = user.is_active = True
    user.save()
    # Only hashes are stored, so an old token cannot be printed again: replace it.
    for token in ApiToken.objects.filter(user=user, name=DEMO_TOKEN_NAME, revoked__isnull=True):
        api_token_revoke(token=token)
    project = default_project()
    membership_set(user=user, project=project, role=Role.ADMIN)
    _, plaintext = api_token_create(user=user, project=project, name=DEMO_TOKEN_NAME)
    loaded, present = demo_sessions_load(uploader=user, project=project, directory=directory)
    job = None
    if loaded:
        job = replay_job_create(user=user, project=project, profiles=DEMO_PROFILES, session_ids=loaded)
    return DemoResult(
        loaded=len(loaded), present=present, token=plaintext, password=password, replay_job=job.pk if job else None
    )
