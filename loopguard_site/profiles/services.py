"""Writes of the profiles app: profile versions (saved from a tuning job or
imported from a config file) and tuning jobs."""

from __future__ import annotations

import json
import re

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from detector.config import BUILTIN_PROFILES, Profile, builtin_config, dump_config, loads_config, parse_config
from detector.params import ConfigError
from loopguard_site.accounts.models import Project
from loopguard_site.replay.monitors import profile_unkept_error

from .messages import send_tuning_progress
from .models import ProfileVersion, TuningJob
from .selectors import labelled_streams, profiles_config, stored_config
from .tuning import tune

PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
PROGRESS_EVERY = 5  # candidates scored between progress writes
EXPORT_FORMATS = ("toml", "json")


class ProfileError(ValueError):
    """A profile request that cannot be carried out; `field` names the culprit."""

    def __init__(self, message: str, *, field: str | None = None, line: int | None = None):
        super().__init__(message)
        self.field = field
        self.line = line


def _checked_name(name: object) -> str:
    if not isinstance(name, str) or not PROFILE_NAME.fullmatch(name):
        raise ProfileError("a profile name is 1-100 letters, digits, '-' or '_'", field="name")
    if name in BUILTIN_PROFILES:
        raise ProfileError(f"{name!r} is a built-in profile; store it under another name", field="name")
    return name


def profile_version_create(
    *,
    profile: Profile,
    name: str,
    project: Project,
    user: AbstractBaseUser | None,
    origin: str,
    tuning_job: TuningJob | None = None,
) -> ProfileVersion:
    """A new version of the project's stored profile `name` holding
    `profile`'s table. Names are unique in the lab: another project's name
    is refused."""
    name = _checked_name(name)
    if ProfileVersion.objects.filter(name=name).exclude(project=project).exists():
        raise ProfileError(f"the name {name!r} is taken; choose another", field="name")
    if (problem := profile_unkept_error(profile)) is not None:
        raise ProfileError(f"profile {name!r}: {problem}", field="profile")
    table = {key: value for key, value in profile.to_dict().items() if key != "version"}
    for _ in range(3):  # two savers racing for one version number: the loser retries
        try:
            with transaction.atomic():
                latest = ProfileVersion.objects.filter(name=name).aggregate(v=Max("version"))["v"] or 0
                return ProfileVersion.objects.create(
                    project=project,
                    name=name,
                    version=latest + 1,
                    table_json=json.dumps(table),
                    created_by=user,
                    tuning_job=tuning_job,
                    origin=origin,
                )
        except IntegrityError:
            continue
    raise ProfileError(f"could not store a new version of {name!r}: too many concurrent saves", field="name")


def profile_from_tuning(
    *, job: TuningJob, name: str, models: list[str] | None, user: AbstractBaseUser | None
) -> ProfileVersion:
    """Store a finished tuning job's profile as a new version of `name` in
    the job's project, selected for `models` (default: the job's model glob)."""
    if job.state != TuningJob.State.DONE or not job.result:
        raise ProfileError(f"tuning job {job.pk} has not finished", field="job")
    models = [job.model_glob] if models is None else models
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise ProfileError('"models" must be a list of model-name globs', field="models")
    # The result is jsonb (key order lost): the detectors go back in the order tuning ran them.
    tuned = job.result["profile"]
    table = {"models": models, **{name: tuned[name] for name in job.result["detector_order"]}}
    table["description"] = f"tuned by job {job.pk} from {job.base_profile} on {job.sessions} labelled sessions"
    try:
        profile = loads_config_table(name, table)
    except ConfigError as exc:
        raise ProfileError(str(exc), field="profile") from exc
    return profile_version_create(
        profile=profile, name=name, project=job.project, user=user, origin="tuning", tuning_job=job
    )


def loads_config_table(name: str, table: dict) -> Profile:
    """A profile table checked the way a config file's is."""
    return parse_config({"profiles": {name: table}}).select(name)


def profiles_import(
    *, text: str, project: Project, user: AbstractBaseUser | None, fmt: str | None = None
) -> list[ProfileVersion]:
    """Every profile of a config file (TOML or JSON; `fmt` None guesses)
    stored as a new version in `project`, all or none."""
    if fmt is not None and fmt not in EXPORT_FORMATS:
        raise ProfileError(f"format must be toml or json, not {fmt!r}", field="format")
    try:
        config = loads_config(text, "import", json_format=None if fmt is None else fmt == "json")
    except ConfigError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ProfileError(str(exc), line=int(match.group(1)) if match else None) from exc
    builtin = builtin_config().profiles
    chosen = {name: p for name, p in config.profiles.items() if builtin.get(name) != p}
    if not chosen:
        raise ProfileError("the file defines no profile")
    with transaction.atomic():
        return [
            profile_version_create(profile=profile, name=name, project=project, user=user, origin="import")
            for name, profile in chosen.items()
        ]


def profiles_export(*, versions: QuerySet[ProfileVersion], fmt: str) -> str:
    """The latest of `versions` (a user's: selectors.versions_visible_to) of
    every stored profile as one config file."""
    if fmt not in EXPORT_FORMATS:
        raise ProfileError(f"format must be toml or json, not {fmt!r}", field="format")
    return dump_config(stored_config(versions), fmt)


def tuning_job_create(
    *,
    user: AbstractBaseUser | None,
    project: Project,
    model_glob: object,
    base_profile: object,
    fp_budget: object = 0,
) -> TuningJob:
    """A tuning job on the project's labelled sessions, enqueued once committed."""
    if not isinstance(model_glob, str) or not model_glob.strip():
        raise ProfileError('"model" must be a model name or glob', field="model")
    known = profiles_config(project.pk).profiles
    if base_profile not in known:
        raise ProfileError(f"unknown profile {base_profile!r} (known: {', '.join(known)})", field="profile")
    if isinstance(fp_budget, bool) or not isinstance(fp_budget, int) or fp_budget < 0:
        raise ProfileError('"fp_budget" must be a whole number, at least 0', field="fp_budget")
    with transaction.atomic():
        job = TuningJob.objects.create(
            created_by=user,
            project=project,
            model_glob=model_glob.strip(),
            base_profile=base_profile,
            fp_budget=fp_budget,
        )
        transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def _enqueue(job_id: int) -> None:
    from .tasks import tuning_job_run  # tasks import this module

    tuning_job_run.delay(job_id)


def _job_update(job_id: int, **fields) -> None:
    """Update the job and tell its watchers."""
    TuningJob.objects.filter(pk=job_id).update(**fields)
    send_tuning_progress(TuningJob.objects.get(pk=job_id))


def tuning_job_execute(*, job_id: int) -> None:
    """Run a queued job (claimed once: a second delivery finds it taken)."""
    if not TuningJob.objects.filter(pk=job_id, state=TuningJob.State.QUEUED).update(
        state=TuningJob.State.RUNNING, started=timezone.now()
    ):
        return
    job = TuningJob.objects.get(pk=job_id)
    try:
        base = profiles_config(job.project_id).select(job.base_profile)
        streams = labelled_streams(job.project_id, job.model_glob)
        if not streams:
            raise ProfileError(f"no labelled session has a model matching {job.model_glob!r}")
        _job_update(job_id, sessions=len(streams))

        def progress(done: int, total: int) -> None:
            if done < total and done % PROGRESS_EVERY == 0:
                _job_update(job_id, done=done, total=total)

        result = tune(streams, base, fp_budget=job.fp_budget, progress=progress)
    except Exception as exc:  # noqa: BLE001 - the job records any failure for its page
        _job_update(job_id, state=TuningJob.State.FAILED, error=f"{type(exc).__name__}: {exc}", finished=timezone.now())
        return
    done = result.evaluations
    _job_update(
        job_id, state=TuningJob.State.DONE, result=result.to_dict(), done=done, total=done, finished=timezone.now()
    )
