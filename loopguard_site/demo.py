"""Demo data for `loopguard lab --demo`: the sessions in fixtures/demo/, in
the project "default", each labelled by a demo reviewer as its file's
`meta.label` says (so comparisons and tuning have labels to work on from the
first start), and an admin account `demo` (a superuser, and an admin member
of that project) with an API token of it. The login and token are kept in
the data directory, so a restart on the same data keeps them."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from detector import Monitor
from detector.config import BUILTIN_PROFILES
from detector.importers import parse_path
from loopguard_site.accounts.models import ApiToken, Project, Role
from loopguard_site.accounts.selectors import api_token_user
from loopguard_site.accounts.services import api_token_create, api_token_revoke, default_project, membership_set
from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_job_create
from loopguard_site.review.models import Label
from loopguard_site.review.selectors import detection_item
from loopguard_site.review.truth import CLEAN, SESSION_ITEM, TRUE_LOOP
from loopguard_site.transcripts.models import RawUpload, Session
from loopguard_site.transcripts.selectors import scan_profile_name
from loopguard_site.transcripts.services import session_create_from_events

DEMO_DIR = settings.ASSETS_DIR / "fixtures" / "demo"
DEMO_USERNAME = "demo"
DEMO_TOKEN_NAME = "demo"
DEMO_TAG = "demo"
DEMO_REVIEWER = "demo-reviewer"  # who labelled the demo sessions
CREDENTIALS_FILE = "demo-login.json"  # in the data directory: the demo login and token, kept across restarts
# Replayed on load, so a newcomer sees detections at once and can compare
# designs: every built-in profile (each session's own one among them).
DEMO_PROFILES = list(BUILTIN_PROFILES)


@dataclass(frozen=True)
class DemoResult:
    loaded: int  # sessions stored by this call
    present: int  # demo files already stored before
    token: str  # the demo admin's API token (plaintext; the same on every call with the same data directory)
    password: str  # the demo admin's password (likewise)
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
        model = transcript.model or ""
        session = session_create_from_events(
            title=transcript.title or path.stem,
            model=model,
            source_format=transcript.format,
            parser_version=transcript.parser_version,
            events=transcript.events,
            raw=raw,
            filename=path.name,
            uploader=uploader,
            project=project,
            tags=[DEMO_TAG],
            profile=scan_profile_name(project.pk, model),
        )
        demo_label(session=session, events=transcript.events)
        loaded.append(session.pk)
    return loaded, present


def demo_label(*, session: Session, events: list[dict]) -> Label | None:
    """The demo reviewer's label of a demo session, as its file's
    `meta.label` says: `normal` is a clean session; `loop` a true loop, on
    the first detection of the session's own profile (else of the first
    built-in profile that finds one), keyed by its signature so it holds for
    the detection the replay stores."""
    meta = events[0].get("meta", {}) if events and events[0].get("type") == "session" else {}
    if meta.get("label") not in ("loop", "normal"):
        return None
    reviewer = _demo_reviewer()
    if meta["label"] == "normal":
        label, _ = Label.objects.update_or_create(
            session=session, item=SESSION_ITEM, reviewer=reviewer, defaults={"label": CLEAN}
        )
        return label
    for profile in dict.fromkeys([session.profile, *DEMO_PROFILES]):
        monitor = Monitor(profile, model=session.model)
        found = next((d for event in events for d in monitor.feed(event)), None)
        if found is None:
            continue
        finding = Detection(session=session, profile=profile, detector=found.detector, type=found.type,
                            channel=found.channel, start=found.start, end=found.end, at=found.at)  # fmt: skip
        label, _ = Label.objects.update_or_create(
            session=session,
            item=detection_item(finding),
            reviewer=reviewer,
            defaults={
                "label": TRUE_LOOP, "profile": profile, "detector": found.detector, "detection_type": found.type,
                "channel": found.channel, "start": found.start, "end": found.end, "at": found.at,
            },
        )  # fmt: skip
        return label
    return None


def _demo_reviewer():
    reviewer, created = get_user_model().objects.get_or_create(username=DEMO_REVIEWER)
    if created:
        reviewer.set_unusable_password()  # labels only: nobody logs in as it
        reviewer.save()
    membership_set(user=reviewer, project=default_project(), role=Role.REVIEWER)
    return reviewer


@transaction.atomic
def demo_load(*, directory: Path = DEMO_DIR) -> DemoResult:
    """The demo admin with its password and one live API token (those kept
    in the data directory when they still work, else new ones, earlier demo
    tokens revoked), the demo sessions with their labels, and a replay job
    for the sessions stored now (its tasks are queued once this transaction
    commits)."""
    user, _ = get_user_model().objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    user.is_staff = user.is_superuser = user.is_active = True
    project = default_project()
    membership_set(user=user, project=project, role=Role.ADMIN)
    kept = _kept_credentials()
    if kept and user.check_password(kept["password"]) and api_token_user(kept["token"]) == user:
        password, plaintext = kept["password"], kept["token"]
        user.save()
    else:
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.save()
        # Only hashes are stored, so an old token cannot be printed again: replace it.
        for token in ApiToken.objects.filter(user=user, name=DEMO_TOKEN_NAME, revoked__isnull=True):
            api_token_revoke(token=token)
        _, plaintext = api_token_create(user=user, project=project, name=DEMO_TOKEN_NAME)
        _keep_credentials(password, plaintext)
    loaded, present = demo_sessions_load(uploader=user, project=project, directory=directory)
    job = None
    if loaded:
        job = replay_job_create(user=user, project=project, profiles=DEMO_PROFILES, session_ids=loaded)
    return DemoResult(
        loaded=len(loaded), present=present, token=plaintext, password=password, replay_job=job.pk if job else None
    )


def _credentials_path() -> Path:
    return Path(settings.DATA_DIR) / CREDENTIALS_FILE


def _kept_credentials() -> dict | None:
    try:
        kept = json.loads(_credentials_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or not all(isinstance(kept.get(k), str) for k in ("password", "token")):
        return None
    return kept


def _keep_credentials(password: str, token: str) -> None:
    """Write the demo login and token where only this user can read them."""
    path = _credentials_path()
    temporary = path.with_suffix(".tmp")
    temporary.touch(mode=0o600, exist_ok=True)
    temporary.chmod(0o600)
    temporary.write_text(json.dumps({"password": password, "token": token}))
    temporary.replace(path)
