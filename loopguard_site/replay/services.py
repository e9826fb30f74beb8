"""Writes of the replay app: replaying a session, and replay jobs.

`replay_session` is the one replay: the Monitor over a session's stored
events, results stored per session × profile (a re-run replaces them);
`replay_session_profiles` does it for several profiles with one read of the
events. Jobs fan that out over sessions × profiles: one Celery task per
session (all its profiles at once), enqueued
in chunks by a dispatcher task so a job over every session costs the request
one message; each run is claimed once with a conditional UPDATE, and the
job's counters move with F() expressions in the transaction that stores the
run's results, so a redelivered task can neither lose nor double-count one.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import partial

from django.contrib.auth.models import AbstractBaseUser
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Case, F, Max, Q, Value, When
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from detector import Checkpoint, EventError, Monitor, StreamContext
from detector import Detection as Found
from detector.config import Config
from loopguard_site.accounts.models import Project
from loopguard_site.accounts.services import default_project
from loopguard_site.errors import FieldError
from loopguard_site.jobs import job_requeue_claim, job_stale_cutoff
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_event_stream

from .messages import send_job_progress
from .models import CheckpointEvaluation, Detection, ReplayJob, ReplayRun, SessionVerdict
from .monitors import profile_monitor
from .selectors import (
    SESSION_FILTER_KEYS,
    existing_session_ids,
    job_queued_session_ids,
    job_runs_of_session,
    profile_names,
    replay_config,
    replay_job_get,
    session_ids_matching,
)

ROW_BATCH = 1000  # rows per INSERT
DISPATCH_CHUNK = 500  # session tasks one dispatcher task enqueues
# A worker tells a job's sockets its counters when it finishes and otherwise
# at most this often: a message costs about 25 ms, a short session's replay less.
PROGRESS_INTERVAL_S = 0.5
_progress_sent: dict[int, float] = {}  # job id -> when this process last sent its counters


class ReplayError(RuntimeError):
    """A session that cannot be replayed (a stored event the monitor refuses)."""


@dataclass(frozen=True)
class ReplaySummary:
    """What a replay found, as stored on its `ReplayRun` (fields of the same names)."""

    detection_count: int = 0
    first_detection_at: int | None = None
    first_detection_start: int | None = None
    first_detection_channel: str = ""
    first_detection_detector: str = ""
    first_detection_type: str = ""
    first_detection_seq: int | None = None
    spent_after_loop: int | None = None


def replay_summary(found: list[tuple[int, Found]], ctx: StreamContext) -> ReplaySummary:
    """The summary of a replay's detections (with the seq of the event that
    fired each, in firing order) and the monitor's final positions."""
    if not found:
        return ReplaySummary()
    seq, first = found[0]
    if first.channel in ctx.offsets:
        spent = ctx.offsets[first.channel] - first.start
    elif first.channel == "tools":
        spent = ctx.tool_calls - first.start
    else:  # the `session` channel has no positions to count
        spent = None
    return ReplaySummary(
        detection_count=len(found),
        first_detection_at=first.at,
        first_detection_start=first.start,
        first_detection_channel=first.channel,
        first_detection_detector=first.detector,
        first_detection_type=first.type,
        first_detection_seq=seq,
        spent_after_loop=spent,
    )


def replay_session(
    *, session: Session, profile_name: str, config: Config | None = None, run: ReplayRun | None = None
) -> ReplaySummary:
    """Run the profile over the session's stored events, in seq order, and
    store every detection and checkpoint evaluation in place of that session
    × profile's earlier ones. With `run`, the run is marked done with the
    summary, and its job counted, in the same transaction. A stored event
    the monitor refuses raises `ReplayError`, and nothing is stored."""
    (outcome,) = replay_session_profiles(session=session, runs=[(profile_name, run)], config=config)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


class _ProfileReplay:
    """One profile's Monitor over a session, and what it found so far."""

    def __init__(self, monitor: Monitor):
        self.monitor = monitor
        self.found: list[tuple[int, Found]] = []
        self.checkpoints: list[tuple[int, Checkpoint]] = []
        self.error: Exception | None = None

    def feed(self, seq: int, event: dict) -> None:
        found = self.monitor.feed(event)
        if found:
            self.found.extend((seq, detection) for detection in found)
        if self.monitor.ctx.checkpoints:
            self.checkpoints.extend((seq, checkpoint) for checkpoint in self.monitor.take_checkpoints())


def replay_session_profiles(
    *, session: Session, runs: list[tuple[str, ReplayRun | None]], config: Config | None = None
) -> list[ReplaySummary | Exception]:
    """`replay_session` for several profiles (each with its run or None) at
    once: the session's events are read once and each is fed to one Monitor
    per profile; each profile's results are stored (and its run finished) in
    a transaction of its own. A profile that fails gets its exception in
    place of a summary (`ReplayError` for an event its monitor refuses),
    stores nothing, and the others go on. Database outages propagate."""
    config = config or replay_config(session.project_id)
    replays: list[_ProfileReplay | Exception] = []
    for profile, _ in runs:
        try:
            replays.append(_ProfileReplay(profile_monitor(config.select(profile), model=session.model)))
        except Exception as exc:  # noqa: BLE001 - a profile that cannot start fails alone
            replays.append(exc)
    feeding = [replay for replay in replays if isinstance(replay, _ProfileReplay)]
    for seq, event in session_event_stream(session.pk):
        failed = False
        for replay in feeding:
            try:
                replay.feed(seq, event)
            except Exception as exc:  # noqa: BLE001 - this profile's alone
                if isinstance(exc, EventError):
                    exc = ReplayError(f"session {session.pk}, event {seq}: {exc}")
                replay.error, failed = exc, True
        if failed:
            feeding = [replay for replay in feeding if replay.error is None]
    outcomes: list[ReplaySummary | Exception] = []
    for (profile, run), replay in zip(runs, replays, strict=True):
        if isinstance(replay, Exception) or replay.error is not None:
            outcomes.append(replay if isinstance(replay, Exception) else replay.error)
            continue
        try:
            outcomes.append(_replay_store(session, profile, run, replay))
        except (OperationalError, InterfaceError):
            raise
        except Exception as exc:  # noqa: BLE001 - this profile's alone
            outcomes.append(exc)
    return outcomes


def _replay_store(session: Session, profile: str, run: ReplayRun | None, replay: _ProfileReplay) -> ReplaySummary:
    summary = replay_summary(replay.found, replay.monitor.ctx)
    with transaction.atomic():
        # One writer per session at a time: two replays of the same pair
        # (a duplicate delivery) must not both delete, then both insert.
        list(Session.objects.select_for_update().filter(pk=session.pk).values_list("pk"))
        _results_replace(session, profile, run, replay.found, replay.checkpoints)
        if run is not None:
            _run_finished(run, ReplayRun.State.DONE, summary=summary)
    return summary


def _results_replace(
    session: Session,
    profile: str,
    run: ReplayRun | None,
    found: list[tuple[int, Found]],
    checkpoints: list[tuple[int, Checkpoint]],
) -> None:
    Detection.objects.filter(session=session, profile=profile).delete()
    CheckpointEvaluation.objects.filter(session=session, profile=profile).delete()
    SessionVerdict.objects.filter(session=session, profile=profile).delete()
    if not found_store(session=session, profile=profile, run=run, found=found, checkpoints=checkpoints):
        session_verdict_add(session=session, profile=profile, rows=[])  # a replay records a clean verdict too


def found_store(
    *,
    session: Session,
    profile: str,
    run: ReplayRun | None,
    found: list[tuple[int, Found]],
    checkpoints: list[tuple[int, Checkpoint]],
) -> list[Detection]:
    """The one writer of what the detectors found, for replay and live ingest
    alike: each detection and checkpoint evaluation (with the seq of the event
    that fired it) as a row of the session × profile, the detections counted
    on its verdict. The detection rows stored, in firing order."""
    rows = Detection.objects.bulk_create(
        [Detection(session=session, profile=profile, run=run, event_seq=seq, **asdict(d)) for seq, d in found],
        batch_size=ROW_BATCH,
    )
    if rows:
        session_verdict_add(session=session, profile=profile, rows=rows)
    CheckpointEvaluation.objects.bulk_create(
        (
            CheckpointEvaluation(session=session, profile=profile, run=run, event_seq=seq, **_checkpoint_fields(c))
            for seq, c in checkpoints
        ),
        batch_size=ROW_BATCH,
    )
    return rows


def _checkpoint_fields(checkpoint: Checkpoint) -> dict:
    fields = asdict(checkpoint)
    fields["check_name"] = fields.pop("check")  # renamed in the model: Model.check() is Django's
    return fields


def session_verdict_add(*, session: Session, profile: str, rows: list[Detection]) -> None:
    """Count newly stored detection rows (in firing order) on the session ×
    profile's verdict, creating it (clean when there are none); the first row
    ever stored stays its first detection. Call inside the transaction that
    stored the rows."""
    first = rows[0] if rows else None
    fields = {} if first is None else {
        "first_detection_id": first.pk,
        "first_detection_seq": first.event_seq,
        "first_detection_channel": first.channel,
        "first_detection_detector": first.detector,
        "first_detection_type": first.type,
        "first_detection_start": first.start,
        "first_detection_at": first.at,
    }  # fmt: skip
    verdict, created = SessionVerdict.objects.select_for_update().get_or_create(
        session=session, profile=profile, defaults={"looped": bool(rows), "detection_count": len(rows), **fields}
    )
    if created or not rows:
        return
    if verdict.looped:
        SessionVerdict.objects.filter(pk=verdict.pk).update(detection_count=F("detection_count") + len(rows))
    else:
        SessionVerdict.objects.filter(pk=verdict.pk).update(looped=True, detection_count=len(rows), **fields)


def _run_finished(
    run: ReplayRun, state: str, *, summary: ReplaySummary | None = None, error: str = "", holding: Q | None = None
) -> None:
    """Mark the run finished and count it on its job (call inside a
    transaction), if it is still `holding` (default: running). A duplicate
    of a task that finishes the same run again counts nothing."""
    fields = asdict(summary) if summary is not None else {}
    holding = Q(state=ReplayRun.State.RUNNING) if holding is None else holding
    if not ReplayRun.objects.filter(holding, pk=run.pk).update(
        state=state, error=error, finished=timezone.now(), **fields
    ):
        return
    failed = 1 if state == ReplayRun.State.FAILED else 0
    ReplayJob.objects.filter(pk=run.job_id).update(done=F("done") + 1, failed=F("failed") + failed)
    # The last run to finish closes a running job: failed if every run failed.
    ReplayJob.objects.filter(pk=run.job_id, state=ReplayJob.State.RUNNING, done=F("total")).update(
        state=Case(When(failed=F("total"), then=Value(ReplayJob.State.FAILED)), default=Value(ReplayJob.State.DONE)),
        finished=timezone.now(),
    )


def _claimable(claim: str) -> Q:
    return Q(state=ReplayRun.State.QUEUED) | Q(state=ReplayRun.State.RUNNING, claimed_by=claim)


def replay_run_claim(*, run_id: int, claim: str) -> bool:
    """Take the run for the task `claim`: a queued run, or one this same task
    had claimed before (a redelivery after its worker died, or a retry).
    Exactly one of several tasks racing for a run gets True."""
    taken = ReplayRun.objects.filter(_claimable(claim), pk=run_id).update(
        state=ReplayRun.State.RUNNING, claimed_by=claim, attempts=F("attempts") + 1, started=timezone.now()
    )
    return taken == 1


def replay_job_session_execute(*, job_id: int, session_id: int, claim: str) -> None:
    """Replay one session through each profile of the job whose run this task
    can claim (see `replay_run_claim`), reading its events once for all of
    them; a run that fails is recorded as failed and the others go on.
    Database outages propagate, for the task to retry."""
    claimed = [
        run
        for run in job_runs_of_session(job_id=job_id, session_id=session_id)
        if replay_run_claim(run_id=run.pk, claim=claim)
    ]
    if not claimed:
        return
    _job_started(job_id)
    outcomes = replay_session_profiles(session=claimed[0].session, runs=[(run.profile, run) for run in claimed])
    for run, outcome in zip(claimed, outcomes, strict=True):
        if isinstance(outcome, Exception):
            with transaction.atomic():
                _run_finished(run, ReplayRun.State.FAILED, error=f"{type(outcome).__name__}: {outcome}")
    _progress(job_id)


def replay_session_runs_abandon(*, job_id: int, session_id: int, claim: str, error: str) -> None:
    """Record as failed the session's runs a task gave up on (its own, or
    still queued), so the job still finishes and says why."""
    for run in job_runs_of_session(job_id=job_id, session_id=session_id):
        with transaction.atomic():
            _job_started(job_id)
            _run_finished(run, ReplayRun.State.FAILED, error=error, holding=_claimable(claim))
    _progress(job_id)


def _job_started(job_id: int) -> None:
    ReplayJob.objects.filter(pk=job_id, state=ReplayJob.State.QUEUED).update(
        state=ReplayJob.State.RUNNING, started=timezone.now()
    )


def _progress(job_id: int) -> None:
    job = replay_job_get(job_id)
    if job is None:
        return
    now = time.monotonic()
    for stale in [i for i, sent in _progress_sent.items() if now - sent >= PROGRESS_INTERVAL_S]:
        del _progress_sent[stale]
    if job.state in (ReplayJob.State.QUEUED, ReplayJob.State.RUNNING):
        if job_id in _progress_sent:
            return
        _progress_sent[job_id] = now
    send_job_progress(job)


def replay_job_create(
    *,
    user: AbstractBaseUser | None,
    project: Project | None = None,
    profiles: list[str],
    session_ids: list[int] | None = None,
    all_sessions: bool = False,
    session_filter: dict[str, str] | None = None,
) -> ReplayJob:
    """A job replaying the chosen sessions of `project` (None: the project
    "default"; a list of ids, or all its sessions, optionally filtered)
    through each profile; its tasks are enqueued once the job is committed."""
    project = project or default_project()
    chosen, profiles, selection = replay_targets(
        project_id=project.pk,
        profiles=profiles,
        session_ids=session_ids,
        all_sessions=all_sessions,
        session_filter=session_filter,
    )
    with transaction.atomic():
        job = ReplayJob.objects.create(
            created_by=user, project=project, profiles=profiles, selection=selection, total=len(chosen) * len(profiles)
        )
        ReplayRun.objects.bulk_create(
            (ReplayRun(job=job, session_id=session_id, profile=p) for session_id in chosen for p in profiles),
            batch_size=ROW_BATCH,
        )
        transaction.on_commit(lambda: _dispatch(job.pk))
    return job


def sessions_scan(*, sessions: list[Session], user: AbstractBaseUser | None) -> list[ReplayJob]:
    """Scan sessions as they arrive, each with its own profile
    (`Session.profile`, set when it was stored): one replay job per project
    and profile, its tasks enqueued once the caller's transaction commits."""
    groups: dict[tuple[int, str], list[int]] = {}
    for session in sessions:
        groups.setdefault((session.project_id, session.profile or "default"), []).append(session.pk)
    projects = Project.objects.in_bulk([project_id for project_id, _ in groups])
    return [
        replay_job_create(user=user, project=projects[project_id], profiles=[profile], session_ids=ids)
        for (project_id, profile), ids in groups.items()
    ]


def queued_runs_execute_here(*, session_ids: list[int]) -> None:
    """Run the queued replays of these sessions in this process, for a
    command that has no worker to send them to (the embedded mode's broker
    lives in the lab's process); a task that reaches them later finds
    nothing to claim."""
    runs = ReplayRun.objects.filter(session_id__in=session_ids, state=ReplayRun.State.QUEUED)
    for job_id, session_id in runs.values_list("job_id", "session_id").distinct().order_by("job_id", "session_id"):
        replay_job_session_execute(job_id=job_id, session_id=session_id, claim=f"local-{job_id}")


def replay_targets(
    *,
    project_id: int,
    profiles: object,
    session_ids: object = None,
    all_sessions: bool = False,
    session_filter: object = None,
) -> tuple[list[int], list[str], dict]:
    """What a replay request in the project picks, checked: the session ids
    (of the project's sessions only), the profile names (duplicates dropped) and the selection as a job records it; a
    `FieldError` naming the field otherwise."""
    profiles = _checked_profiles(project_id, profiles)
    if all_sessions == (session_ids is not None):
        raise FieldError('give either "sessions": [ids] or "all": true', field="sessions")
    if all_sessions:
        session_filter = _checked_filter({} if session_filter is None else session_filter)
        chosen = list(session_ids_matching(project_id, session_filter))
        if not chosen:
            raise FieldError("no session matches the filter", field="filter")
        return chosen, profiles, {"all": True, "filter": session_filter}
    if session_filter is not None:
        raise FieldError('a filter applies to "all": true only', field="filter")
    chosen = _checked_session_ids(project_id, session_ids)
    return chosen, profiles, {"sessions": chosen}


def _dispatch(job_id: int, after_session_id: int = 0, queue: str | None = None) -> None:
    from .tasks import replay_job_dispatch  # tasks import this module

    replay_job_dispatch.apply_async((job_id, after_session_id), queue=queue)


def _checked_profiles(project_id: int, profiles: object) -> list[str]:
    if not isinstance(profiles, list) or not profiles or not all(isinstance(p, str) for p in profiles):
        raise FieldError('"profiles" must be a non-empty list of profile names', field="profiles")
    known = profile_names(project_id)
    unknown = [p for p in profiles if p not in known]
    if unknown:
        raise FieldError(f"unknown profile {unknown[0]!r} (known: {', '.join(known)})", field="profiles")
    return list(dict.fromkeys(profiles))


def _checked_filter(session_filter: object) -> dict:
    if not isinstance(session_filter, dict):
        raise FieldError('"filter" must be an object', field="filter")
    for key, value in session_filter.items():
        if key not in SESSION_FILTER_KEYS:
            known = ", ".join(SESSION_FILTER_KEYS)
            raise FieldError(f"unknown filter key {key!r} (known: {known})", field=f"filter.{key}")
        expected = bool if key == "has_detections" else str
        if not isinstance(value, expected) and value is not None:
            kind = "true or false" if expected is bool else "a string"
            raise FieldError(f"filter.{key} must be {kind}", field=f"filter.{key}")
    return {key: value for key, value in session_filter.items() if value not in (None, "")}


def _checked_session_ids(project_id: int, session_ids: object) -> list[int]:
    if (
        not isinstance(session_ids, list)
        or not session_ids
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in session_ids)
    ):
        raise FieldError('"sessions" must be a non-empty list of session ids', field="sessions")
    chosen = list(dict.fromkeys(session_ids))
    missing = sorted(set(chosen) - existing_session_ids(project_id, chosen))
    if missing:  # another project's session is no session of this one
        raise FieldError(f"no session with id {missing[0]}", field="sessions")
    return chosen


def replay_job_enqueue_chunk(*, job_id: int, after_session_id: int, queue: str | None) -> None:
    """Enqueue the session tasks of the next chunk of the job's queued runs,
    then the dispatcher of the chunk after it; stops on a cancelled job."""
    from .tasks import replay_session_runs  # tasks import this module

    job = ReplayJob.objects.filter(pk=job_id).exclude(state=ReplayJob.State.CANCELLED).first()
    if job is None:
        return
    session_ids = job_queued_session_ids(job_id=job_id, after_session_id=after_session_id, limit=DISPATCH_CHUNK)
    with replay_session_runs.app.producer_or_acquire() as producer:
        for session_id in session_ids:
            replay_session_runs.apply_async((job_id, session_id), queue=queue, producer=producer)
    if len(session_ids) == DISPATCH_CHUNK:
        _dispatch(job_id, session_ids[-1], queue)


def replay_jobs_requeue_stale(*, now: datetime) -> list[int]:
    """Re-queue the runs of every queued or running job with no run started
    or finished for LOOPGUARD_JOB_STALE_SECONDS before `now` (its tasks were
    lost: a broker restarted without persistence): runs still `running`
    since before then go back to `queued` (their claim dropped), and the
    job's queued runs are dispatched again. Nothing is doubled: a run is
    claimed once, its results replace the pair's, and it is counted once.
    A job is re-queued at most once per stale period (`job_requeue_claim`).
    The ids re-queued."""
    cutoff = job_stale_cutoff(now)
    stale = (
        ReplayJob.objects.filter(state__in=(ReplayJob.State.QUEUED, ReplayJob.State.RUNNING))
        .annotate(
            active=Greatest(
                "created",
                Coalesce(Max("runs__started"), "created"),
                Coalesce(Max("runs__finished"), "created"),
            )
        )
        .filter(active__lt=cutoff)
        .values_list("pk", "created")
    )
    requeued = []
    for job_id, created in stale:
        if not job_requeue_claim("replay", job_id, created):
            continue  # another process (or an earlier sweep) did it
        with transaction.atomic():
            ReplayRun.objects.filter(job_id=job_id, state=ReplayRun.State.RUNNING, started__lt=cutoff).update(
                state=ReplayRun.State.QUEUED, claimed_by=""
            )
            transaction.on_commit(partial(_dispatch, job_id))
        requeued.append(job_id)
    return requeued


def replay_job_cancel(*, job: ReplayJob) -> ReplayJob:
    """Stop a queued or running job: its queued runs are cancelled (their
    tasks find nothing to claim); runs already running finish."""
    with transaction.atomic():
        ReplayJob.objects.filter(pk=job.pk, state__in=[ReplayJob.State.QUEUED, ReplayJob.State.RUNNING]).update(
            state=ReplayJob.State.CANCELLED, finished=timezone.now()
        )
        ReplayRun.objects.filter(job=job, state=ReplayRun.State.QUEUED).update(state=ReplayRun.State.CANCELLED)
    job.refresh_from_db()
    send_job_progress(job)
    return job
