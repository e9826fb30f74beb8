"""Reads of the profiles app: stored versions, the config replays and
exports use, tuning jobs, and the labelled streams tuning runs on."""

from __future__ import annotations

import fnmatch

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from detector.config import Config, builtin_config, parse_config
from loopguard_site.accounts.access import in_visible_projects, object_for
from loopguard_site.accounts.models import Role
from loopguard_site.review.selectors import session_truths
from loopguard_site.transcripts.models import Event, Session

from .models import ProfileVersion, TuningJob
from .tuning import LabelledStream


def versions_visible_to(user: AbstractBaseUser) -> QuerySet[ProfileVersion]:
    """The stored profiles' versions of the projects the user reaches."""
    return in_visible_projects(ProfileVersion.objects.all(), user)


def latest_versions(versions: QuerySet[ProfileVersion]) -> list[ProfileVersion]:
    """The newest of `versions` of every stored profile, by name."""
    latest: dict[str, ProfileVersion] = {}
    for version in versions.order_by("name", "-version"):
        latest.setdefault(version.name, version)
    return list(latest.values())


def _stored_tables(versions: QuerySet[ProfileVersion]) -> dict[str, dict]:
    return {v.name: {**v.table, "version": v.version} for v in latest_versions(versions)}


def profiles_config(project_id: int | None = None) -> Config:
    """The built-in profiles and the latest version of every profile stored
    in the project (None: no stored one): what its replays may run and what
    `select(model=...)` picks from (stored profiles first, so their model
    globs win)."""
    if not project_id:
        return builtin_config()
    stored = _stored_tables(ProfileVersion.objects.filter(project_id=project_id))
    return parse_config({"profiles": stored}, "stored profiles")


def stored_config(versions: QuerySet[ProfileVersion]) -> Config:
    """Only the stored profiles of `versions` (latest versions): the export."""
    tables = _stored_tables(versions)
    config = parse_config({"profiles": tables}, "stored profiles")
    return Config({name: config.profiles[name] for name in tables})


def profile_versions(user: AbstractBaseUser, name: str) -> list[ProfileVersion]:
    """The versions of the stored profile `name` if the user reaches its project, else none."""
    return list(versions_visible_to(user).filter(name=name).select_related("created_by", "tuning_job"))


def tuning_job_for(user: AbstractBaseUser, job_id: int, role: str = Role.VIEWER) -> TuningJob:
    """The tuning job if the user has `role` in its project (accounts.access refuses otherwise)."""
    return object_for(user, TuningJob.objects.all(), job_id, role=role, noun="tuning job")


def model_matches(model: str, glob: str) -> bool:
    """Model-name glob matching as profiles do it (case-insensitive)."""
    return fnmatch.fnmatchcase(model.lower(), glob.lower())


def labelled_streams(project_id: int, model_glob: str) -> list[LabelledStream]:
    """Every labelled session (review/truth.py) of the project whose model
    matches the glob, with its events, oldest first."""
    truths = session_truths(Session.objects.filter(project_id=project_id).values_list("pk", flat=True))
    sessions = Session.objects.filter(pk__in=list(truths)).order_by("id").only("id", "model")
    streams = []
    for session in sessions:
        if not model_matches(session.model, model_glob):
            continue
        events = Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
        truth = truths[session.pk]
        streams.append(
            LabelledStream(
                key=str(session.pk),
                label=truth.label,
                events=list(events),
                model=session.model,
                loop_starts=truth.loop_starts,
            )
        )
    return streams


def tuning_progress(job: TuningJob) -> dict:
    """A job as `GET /api/tuning/<id>` answers it."""
    return {
        "id": job.pk,
        "state": job.state,
        "done": job.done,
        "total": job.total,
        "sessions": job.sessions,
        "error": job.error,
        "result": job.result,
    }
