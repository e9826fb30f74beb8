"""Reads of the profiles app: stored versions, the config replays and
exports use, tuning jobs, and the labelled streams tuning runs on."""

from __future__ import annotations

import fnmatch

from detector.config import Config, parse_config
from loopguard_site.review.selectors import session_truths
from loopguard_site.transcripts.models import Event, Session

from .models import ProfileVersion, TuningJob
from .tuning import LabelledStream


def latest_versions() -> list[ProfileVersion]:
    """The newest version of every stored profile, by name."""
    latest: dict[str, ProfileVersion] = {}
    for version in ProfileVersion.objects.order_by("name", "-version"):
        latest.setdefault(version.name, version)
    return list(latest.values())


def _stored_tables() -> dict[str, dict]:
    return {v.name: {**v.table, "version": v.version} for v in latest_versions()}


def profiles_config() -> Config:
    """The built-in profiles and the latest version of every stored one:
    what replays may run and what `select(model=...)` picks from (stored
    profiles first, so their model globs win)."""
    return parse_config({"profiles": _stored_tables()}, "stored profiles")


def stored_config() -> Config:
    """Only the stored profiles (latest versions): the export."""
    tables = _stored_tables()
    config = profiles_config()
    return Config({name: config.profiles[name] for name in tables})


def profile_versions(name: str) -> list[ProfileVersion]:
    return list(ProfileVersion.objects.filter(name=name).select_related("created_by", "tuning_job"))


def profile_version_get(name: str, version: int) -> ProfileVersion | None:
    return ProfileVersion.objects.filter(name=name, version=version).first()


def tuning_job_get(job_id: int) -> TuningJob | None:
    return TuningJob.objects.filter(pk=job_id).first()


def model_matches(model: str, glob: str) -> bool:
    """Model-name glob matching as profiles do it (case-insensitive)."""
    return fnmatch.fnmatchcase(model.lower(), glob.lower())


def labelled_streams(model_glob: str) -> list[LabelledStream]:
    """Every labelled session (review/truth.py) whose model matches the glob,
    with its events, oldest first."""
    truths = session_truths()
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
