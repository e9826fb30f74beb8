"""Reads of the profiles app: stored versions, the config replays and
exports use, tuning jobs, and the labelled streams tuning runs on."""

from __future__ import annotations

import dataclasses
import fnmatch
import sys
from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from detector.config import Config, builtin_config, parse_config
from detector.registry import DETECTORS
from detector.tuning import DetectionMark, LabelledStream
from loopguard_site.accounts.access import in_visible_projects, object_for
from loopguard_site.accounts.models import Role
from loopguard_site.review.models import Label
from loopguard_site.review.selectors import item_signature, labelled_session_items
from loopguard_site.review.truth import DETECTION_LABELS
from loopguard_site.transcripts.models import Event, Session

from .models import ProfileVersion, TuningJob


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


def model_matches(model: str, globs: str | list[str]) -> bool:
    """Model-name glob matching as profiles do it (case-insensitive); `globs`
    a list or a comma-separated string."""
    if isinstance(globs, str):
        globs = [glob.strip() for glob in globs.split(",") if glob.strip()]
    return any(fnmatch.fnmatchcase(model.lower(), glob.lower()) for glob in globs)


def labelled_streams(project_id: int, model_globs: str | list[str]) -> tuple[list[LabelledStream], list[int]]:
    """Every labelled session (review/truth.py) of the project whose model
    matches one of the globs, with its events and the final labels of its
    detections, oldest first; and the ids of the labels they rest on."""
    labelled = labelled_session_items(Session.objects.filter(project_id=project_id).values_list("pk", flat=True))
    sessions = Session.objects.filter(pk__in=list(labelled)).order_by("id").only("id", "model")
    streams = []
    for session in sessions:
        if not model_matches(session.model, model_globs):
            continue
        events = Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
        truth, items = labelled[session.pk]
        marks = []
        for item in items:
            signature = item_signature(item.item)
            if signature and item.final in DETECTION_LABELS:
                fields = {key: signature[key] for key in ("detector", "type", "channel", "start", "end")}
                marks.append(DetectionMark(**fields, label=item.final))
        streams.append(
            LabelledStream(
                key=str(session.pk),
                label=truth.label,
                events=list(events),
                model=session.model,
                loop_starts=truth.loop_starts,
                marks=tuple(marks),
            )
        )
    label_ids = Label.objects.filter(session_id__in=[int(s.key) for s in streams]).order_by("id")
    return streams, list(label_ids.values_list("id", flat=True))


def session_titles(project_id: int, keys: list[str]) -> dict[str, str]:
    """The titles of the project's sessions among `keys` (session ids as text), by key."""
    ids = [int(key) for key in keys if key.isdigit()]
    rows = Session.objects.filter(project_id=project_id, pk__in=ids).values_list("pk", "title")
    return {str(pk): title for pk, title in rows}


def labelled_models(project_ids: list[int]) -> list[dict]:
    """The models of the projects' labelled sessions, with how many are
    loop and clean: what a tuning job may be scoped to."""
    labelled = labelled_session_items(Session.objects.filter(project_id__in=project_ids).values_list("pk", flat=True))
    counts: dict[str, dict] = {}
    for session_id, model in Session.objects.filter(pk__in=list(labelled)).values_list("id", "model"):
        row = counts.setdefault(model, {"model": model, "loop": 0, "normal": 0})
        row[labelled[session_id][0].label] += 1
    return sorted(counts.values(), key=lambda row: row["model"])


def tuning_progress(job: TuningJob) -> dict:
    """A job as `GET /api/tuning/<id>` answers it."""
    return {
        "id": job.pk,
        "state": job.state,
        "done": job.done,
        "total": job.total,
        "sessions": job.sessions,
        "labels": len(job.labels),
        "label_ids": job.labels,
        "models": job.globs,
        "base_profile": job.base_profile,
        "folds": job.folds,
        "max_evaluations": job.max_evaluations,
        "time_limit": job.time_limit,
        "error": job.error,
        "result": job.result,
    }


def detector_summary(name: str) -> str:
    """What a detector watches, in words: the first paragraph of its module's docstring."""
    cls = DETECTORS[name]
    text = (sys.modules[cls.__module__].__doc__ or cls.__doc__ or "").strip()
    return " ".join(text.split("\n\n")[0].split()).replace("`", "")


def _bounds(meta: Mapping) -> str:
    if meta.get("choices"):
        return "one of " + ", ".join(map(str, meta["choices"]))
    if meta.get("low") is not None and meta.get("high") is not None:
        step = f" by {meta['step']:g}" if meta.get("step") else ""
        return f"{meta['low']:g} to {meta['high']:g}{step}"
    return ""


def profile_detectors(table: Mapping) -> list[dict]:
    """A profile table's detectors as the profile pages show them: each with
    what it watches and every parameter (value, meaning, bounds, whether
    tuning may change it)."""
    detectors = []
    for name, values in table.items():
        if name not in DETECTORS or not isinstance(values, Mapping):
            continue
        fields = {f.name: f for f in dataclasses.fields(DETECTORS[name].Params)}
        params = [
            {
                "name": key,
                "value": ", ".join(map(str, value)) or "(none)" if isinstance(value, (list, tuple)) else value,
                "doc": fields[key].metadata.get("doc", "") if key in fields else "",
                "bounds": _bounds(fields[key].metadata) if key in fields else "",
                "tuned": bool(key in fields and fields[key].metadata.get("tune")),
            }
            for key, value in values.items()
        ]
        detectors.append({"name": name, "summary": detector_summary(name), "params": params})
    return detectors


def builtin_profiles() -> list[dict]:
    """The built-in profiles with their tables, in definition order."""
    return [
        {"name": name, "profile": profile, "table": profile.to_dict()}
        for name, profile in builtin_config().profiles.items()
    ]
