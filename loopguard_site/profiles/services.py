"""Writes of the profiles app: profile versions (saved from a tuning job or
imported from a config file) and tuning jobs."""

from __future__ import annotations

import json
import re
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q, QuerySet
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from detector.config import BUILTIN_PROFILES, Config, Profile, builtin_config, dump_config, loads_config, parse_config
from detector.params import ConfigError
from detector.tuning import FOLDS_RANGE, TuningCancelled, tune
from loopguard_site.accounts.models import Project
from loopguard_site.errors import FieldError
from loopguard_site.jobs import job_stale_cutoff, jobs_requeue
from loopguard_site.replay.monitors import profile_unkept_error

from .messages import send_tuning_progress
from .models import ProfileVersion, TuningJob
from .selectors import labelled_streams, profiles_config, stored_config

PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
PROGRESS_EVERY = 5  # candidates scored between progress writes (and cancel checks)
MAX_EVALUATIONS_RANGE = (1, 100_000)
TIME_LIMIT_RANGE = (1, 24 * 3600)
EXPORT_FORMATS = ("toml", "json")


def _checked_name(name: object) -> str:
    if not isinstance(name, str) or not PROFILE_NAME.fullmatch(name):
        raise FieldError("a profile name is 1-100 letters, digits, '-' or '_'", field="name")
    if name in BUILTIN_PROFILES:
        raise FieldError(f"{name!r} is a built-in profile; store it under another name", field="name")
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
        raise FieldError(f"the name {name!r} is taken; choose another", field="name")
    if (problem := profile_unkept_error(profile)) is not None:
        raise FieldError(f"profile {name!r}: {problem}", field="profile")
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
    raise FieldError(f"could not store a new version of {name!r}: too many concurrent saves", field="name")


def profile_from_tuning(
    *,
    job: TuningJob,
    name: str,
    models: list[str] | None,
    user: AbstractBaseUser | None,
    accept_recall_loss: bool = False,
) -> ProfileVersion:
    """Store a finished tuning job's profile as a new version of `name` in
    the job's project, selected for `models` (default: the job's model
    globs). A profile that loses recall on the held-out folds is stored
    only when `accept_recall_loss` says the caller saw that."""
    if job.state != TuningJob.State.DONE or not job.result:
        raise FieldError(f"tuning job {job.pk} has not finished", field="job")
    if job.result.get("verdict") == "loses_recall" and accept_recall_loss is not True:
        raise FieldError(
            "this profile catches fewer loops than the base on held-out sessions; "
            "confirm that you accept the loss of recall to save it",
            field="accept_recall_loss",
        )
    models = job.globs if models is None else models
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m for m in models):
        raise FieldError('"models" must be a list of model-name globs', field="models")
    # The result is jsonb (key order lost): the detectors go back in the order tuning ran them.
    tuned = job.result["profile"]
    table = {"models": models, **{name: tuned[name] for name in job.result["detector_order"]}}
    table["description"] = (
        f"tuned by job {job.pk} from {job.base_profile} on {job.sessions} labelled sessions ({len(job.labels)} labels)"
    )
    try:
        profile = loads_config_table(name, table)
    except ConfigError as exc:
        raise FieldError(str(exc), field="profile") from exc
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
        raise FieldError(f"format must be toml or json, not {fmt!r}", field="format")
    try:
        config = loads_config(text, "import", json_format=None if fmt is None else fmt == "json")
    except ConfigError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise FieldError(str(exc), line=int(match.group(1)) if match else None) from exc
    builtin = builtin_config().profiles
    chosen = {name: p for name, p in config.profiles.items() if builtin.get(name) != p}
    if not chosen:
        raise FieldError("the file defines no profile")
    with transaction.atomic():
        return [
            profile_version_create(profile=profile, name=name, project=project, user=user, origin="import")
            for name, profile in chosen.items()
        ]


def profiles_export(*, versions: QuerySet[ProfileVersion], fmt: str) -> str:
    """The latest of `versions` (a user's: selectors.versions_visible_to) of
    every stored profile as one config file."""
    if fmt not in EXPORT_FORMATS:
        raise FieldError(f"format must be toml or json, not {fmt!r}", field="format")
    return dump_config(stored_config(versions), fmt)


def _checked_whole(value: object, field: str, low: int, high: int) -> int:
    """A whole number in [low, high], from JSON or a form's text."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FieldError(f'"{field}" must be a whole number from {low} to {high}', field=field)
    return value


def _checked_globs(models: object) -> list[str]:
    """Model globs from a comma-separated string or a list of strings."""
    if isinstance(models, str):
        models = models.split(",")
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise FieldError('"model" must be a model name or glob, or a list of them', field="model")
    globs = [m.strip() for m in models if m.strip()]
    if not globs:
        raise FieldError('"model" must be a model name or glob, or a list of them', field="model")
    if any("," in glob for glob in globs) or len(", ".join(globs)) > 200:
        raise FieldError('"model": at most 200 characters of globs, none holding a comma', field="model")
    return globs


def profile_version_text(*, version: ProfileVersion, fmt: str) -> str:
    """One stored version as a config file holding that profile alone."""
    if fmt not in EXPORT_FORMATS:
        raise FieldError(f"format must be toml or json, not {fmt!r}", field="format")
    profile = loads_config_table(version.name, {**version.table, "version": version.version})
    return dump_config(Config({version.name: profile}), fmt)


def tuning_job_create(
    *,
    user: AbstractBaseUser | None,
    project: Project,
    model_glob: object,
    base_profile: object,
    fp_budget: object = 0,
    folds: object = 5,
    max_evaluations: object = 600,
    time_limit: object = 600,
) -> TuningJob:
    """A tuning job on the project's labelled sessions whose model matches
    one of `model_glob` (a glob, comma-separated globs or a list), enqueued
    once committed."""
    globs = _checked_globs(model_glob)
    known = profiles_config(project.pk).profiles
    if base_profile not in known:
        raise FieldError(f"unknown profile {base_profile!r} (known: {', '.join(known)})", field="profile")
    fp_budget = _checked_whole(fp_budget, "fp_budget", 0, 1_000_000)
    folds = _checked_whole(folds, "folds", *FOLDS_RANGE)
    max_evaluations = _checked_whole(max_evaluations, "max_evaluations", *MAX_EVALUATIONS_RANGE)
    time_limit = _checked_whole(time_limit, "time_limit", *TIME_LIMIT_RANGE)
    with transaction.atomic():
        job = TuningJob.objects.create(
            created_by=user,
            project=project,
            model_glob=", ".join(globs),
            base_profile=base_profile,
            fp_budget=fp_budget,
            folds=folds,
            max_evaluations=max_evaluations,
            time_limit=time_limit,
        )
        transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def _enqueue(job_id: int) -> None:
    from .tasks import tuning_job_run  # tasks import this module

    tuning_job_run.delay(job_id)


def _job_update(job_id: int, claim: str, **fields) -> bool:
    """Update the job while it runs under `claim` (a cancel, or a re-run
    after it went stale, wins), mark it alive, and tell its watchers."""
    updated = TuningJob.objects.filter(pk=job_id, state=TuningJob.State.RUNNING, claimed_by=claim).update(
        heartbeat=timezone.now(), **fields
    )
    send_tuning_progress(TuningJob.objects.get(pk=job_id))
    return bool(updated)


def tuning_job_cancel(*, job: TuningJob) -> TuningJob:
    """Stop a queued or running job; a running search stops at its next
    check (every PROGRESS_EVERY candidates) and stores nothing."""
    active = (TuningJob.State.QUEUED, TuningJob.State.RUNNING)
    if TuningJob.objects.filter(pk=job.pk, state__in=active).update(
        state=TuningJob.State.CANCELLED, finished=timezone.now()
    ):
        send_tuning_progress(TuningJob.objects.get(pk=job.pk))
    job.refresh_from_db()
    return job


def tuning_job_claim(*, job_id: int, claim: str) -> bool:
    """Take the job for the task `claim`: a queued job, or a running one
    whose worker showed no progress for LOOPGUARD_JOB_STALE_SECONDS (it died;
    this is a redelivery of its task, or another task). A running job that is
    alive is left alone: the broker redelivers a task that runs longer than
    its visibility timeout while it still runs. The search starts afresh."""
    now = timezone.now()
    taken = TuningJob.objects.filter(
        Q(state=TuningJob.State.QUEUED)
        | Q(state=TuningJob.State.RUNNING, heartbeat__lt=job_stale_cutoff(now)),
        pk=job_id,
    ).update(
        state=TuningJob.State.RUNNING, claimed_by=claim, attempts=F("attempts") + 1, started=now, heartbeat=now,
        done=0, total=0,
    )  # fmt: skip
    return taken == 1


def tuning_jobs_requeue_stale(*, now: datetime) -> list[int]:
    """Re-queue every queued or running job that showed no progress for
    LOOPGUARD_JOB_STALE_SECONDS before `now` (its task was lost with a
    broker restarted without persistence, or its worker was killed): back
    to `queued`, its claim dropped (a search still running somewhere stops
    at its next check and stores nothing), and enqueued again. At most once
    per stale period (`job_requeue_claim`). The ids re-queued."""
    cutoff = job_stale_cutoff(now)
    stale = (
        TuningJob.objects.filter(state__in=(TuningJob.State.QUEUED, TuningJob.State.RUNNING))
        .annotate(active=Greatest("created", Coalesce("heartbeat", "created")))
        .filter(active__lt=cutoff)
        .values_list("pk", "created")
    )
    return jobs_requeue(
        "tuning",
        stale,
        reset=lambda job_id: TuningJob.objects.filter(
            pk=job_id, state=TuningJob.State.RUNNING, heartbeat__lt=cutoff
        ).update(state=TuningJob.State.QUEUED, claimed_by=""),
        enqueue=_enqueue,
    )


def tuning_job_execute(*, job_id: int, claim: str = "local") -> None:
    """Run the job if the task `claim` (default: this process, as tests do)
    can take it (`tuning_job_claim`); its writes count only while the job is
    still its own, so a task that lost it (cancelled, or re-run after going
    stale) stores nothing."""
    if not tuning_job_claim(job_id=job_id, claim=claim):
        return
    job = TuningJob.objects.get(pk=job_id)
    try:
        base = profiles_config(job.project_id).select(job.base_profile)
        streams, label_ids = labelled_streams(job.project_id, job.globs)
        if not streams:
            raise FieldError(f"no labelled session has a model matching {job.model_glob!r}")
        _job_update(job_id, claim, sessions=len(streams), labels=label_ids)

        scored = [0]

        def progress(done: int, total: int) -> None:
            scored[0] = done
            if done < total and done % PROGRESS_EVERY == 0:
                _job_update(job_id, claim, done=done, total=total)

        def cancelled() -> bool:  # asked after every candidate; the database every PROGRESS_EVERY
            if scored[0] % PROGRESS_EVERY:
                return False
            return not TuningJob.objects.filter(pk=job_id, state=TuningJob.State.RUNNING, claimed_by=claim).exists()

        result = tune(
            streams,
            base,
            folds=job.folds,
            fp_budget=job.fp_budget,
            max_evaluations=job.max_evaluations,
            time_limit=job.time_limit,
            progress=progress,
            cancelled=cancelled,
        )
    except TuningCancelled:
        return
    except Exception as exc:  # noqa: BLE001 - the job records any failure for its page
        error = f"{type(exc).__name__}: {exc}"
        _job_update(job_id, claim, state=TuningJob.State.FAILED, error=error, finished=timezone.now())
        return
    done = result.evaluations
    _job_update(
        job_id,
        claim,
        state=TuningJob.State.DONE,
        result=result.to_dict(),
        done=done,
        total=done,
        finished=timezone.now(),
    )
