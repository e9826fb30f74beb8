"""Writes of the replay app: replaying a session, and replay jobs.

`replay_session` is the one replay: the Monitor over a session's stored
events, results stored per session × profile (a re-run replaces them);
`replay_session_profiles` does it for several profiles with one read of the
events. Jobs fan that out over sessions × profiles: one Celery task per
chunk of sessions (`task_chunks`; each session through all its profiles at
once), enqueued by a dispatcher task so a job over every session costs the
request one message; each run is claimed once with a conditional UPDATE, and
the job's counters move with F() expressions in the transaction that stores
the runs' results, so a redelivered task can neither lose nor double-count
one (nor can the deletion of a session mid-job: `replay_run_deleted`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
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
from loopguard_site.jobs import job_stale_cutoff, jobs_requeue
from loopguard_site.transcripts.batch_sql import rows_claim, rows_update
from loopguard_site.transcripts.layout import LayoutBuilder
from loopguard_site.transcripts.layout_rows import session_layouts_update, sessions_without_layout
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_event_stream, sessions_event_streams

from .messages import send_job_progress
from .models import CheckpointEvaluation, Detection, ReplayJob, ReplayRun, SessionVerdict
from .monitors import profile_monitor
from .selectors import (
    SESSION_FILTER_KEYS,
    existing_session_ids,
    job_queued_sessions,
    job_runs_of_session,
    profile_names,
    replay_config,
    replay_job_get,
    session_ids_matching,
)

ROW_BATCH = 1000  # rows per INSERT
DISPATCH_CHUNK = 500  # sessions one dispatcher task enqueues the tasks of
# A session task replays a chunk of sessions, so that its fixed cost (the
# task, a transaction, a dozen queries) is paid per chunk rather than per
# session; bounded so that a task stays a fraction of a second of work (the
# job's counters move, and a lost task is replayed again, per chunk). About
# a second of a worker (BENCHMARKS section 3): far inside the broker's
# LOOPGUARD_JOB_VISIBILITY_SECONDS, so a running chunk is not handed to a
# second worker, and its runs are claimed (`started`) session by session, so
# the stale sweep (LOOPGUARD_JOB_STALE_SECONDS) sees a chunk's progress.
# A session larger than TASK_EVENTS is a task of its own, as before chunks.
SESSIONS_PER_TASK = 100
TASK_EVENTS = 50_000  # events fed to monitors (events × profiles)
# Chunk sizes shrink as a dispatch goes (guided self-scheduling): each
# chunk is a third of the events left to feed, between MIN_TASK_EVENTS and
# TASK_EVENTS. Workers take the next chunk when free, so whatever their
# number and speeds, they finish within a small chunk of each other: five
# chunks of ~50,000 events fed, the last of 7,000, left a slower worker of
# two a large chunk to finish alone (BENCHMARKS section 3).
TASK_SHARE_OF_LEFT = 3  # a chunk is 1/3 of the events left
MIN_TASK_EVENTS = 10_000  # smaller, a chunk's fixed cost (a task, a transaction) would count
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


SUMMARY_FIELDS = [field.name for field in fields(ReplaySummary)]


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
    layout = LayoutBuilder() if sessions_without_layout([session]) else None
    replays, layout = _profile_replays(
        session, [profile for profile, _ in runs], config, session_event_stream(session.pk), layout
    )
    outcomes: list[ReplaySummary | Exception] = []
    for (profile, run), replay in zip(runs, replays, strict=True):
        if isinstance(replay, Exception):
            outcomes.append(replay)
            continue
        result = _Result(session, profile, run, replay, layout)
        try:
            with transaction.atomic():
                _results_store([result])
        except (OperationalError, InterfaceError):
            raise
        except Exception as exc:  # noqa: BLE001 - this profile's alone
            outcomes.append(exc)
            continue
        outcomes.append(result.summary)
    return outcomes


def _profile_replays(
    session: Session,
    profiles: list[str],
    config: Config,
    events: Iterable[tuple[int, dict]],
    layout: LayoutBuilder | None = None,
) -> tuple[list[_ProfileReplay | Exception], LayoutBuilder | None]:
    """Each profile's Monitor fed the session's `events` (seq, event), or the
    exception that stopped it: a profile that fails fails alone. `layout`,
    when given, lays out the same events (the session's layout, from this
    read rather than a second one); it comes back fed, or None if it failed."""
    replays: list[_ProfileReplay | Exception] = []
    for profile in profiles:
        try:
            replays.append(_ProfileReplay(profile_monitor(config.select(profile), model=session.model)))
        except Exception as exc:  # noqa: BLE001 - a profile that cannot start fails alone
            replays.append(exc)
    # Each replay with its Monitor's bound `feed` and its context, looked up
    # once: the loop runs for every event and profile, and most events cost
    # the Monitor less than a microsecond (it holds most text chunks).
    feeding = [
        (replay, replay.monitor.feed, replay.monitor.ctx) for replay in replays if isinstance(replay, _ProfileReplay)
    ]
    for seq, event in events:
        if layout is not None:
            try:
                layout.feed(seq, event)
            except Exception:  # noqa: BLE001 - the store lays the session out again, and fails as it did
                layout = None
        failed = False
        for replay, feed, ctx in feeding:
            try:
                found = feed(event)
                if found:
                    replay.found.extend((seq, detection) for detection in found)
                if ctx.checkpoints:
                    replay.checkpoints.extend((seq, checkpoint) for checkpoint in replay.monitor.take_checkpoints())
            except Exception as exc:  # noqa: BLE001 - this profile's alone
                if isinstance(exc, EventError):
                    exc = ReplayError(f"session {session.pk}, event {seq}: {exc}")
                replay.error, failed = exc, True
        if failed:
            feeding = [feeder for feeder in feeding if feeder[0].error is None]
    outcomes = [
        replay.error if isinstance(replay, _ProfileReplay) and replay.error is not None else replay
        for replay in replays
    ]
    return outcomes, layout


class _Result:
    """A profile's replay of a session, to store (with its run, if any, and
    the session's layout if the replay laid it out)."""

    def __init__(
        self,
        session: Session,
        profile: str,
        run: ReplayRun | None,
        replay: _ProfileReplay,
        layout: LayoutBuilder | None = None,
    ):
        self.session, self.profile, self.run, self.replay, self.layout = session, profile, run, replay, layout
        self.summary = replay_summary(replay.found, replay.monitor.ctx)


def _results_store(results: list[_Result]) -> None:
    """Store each result in place of its session × profile's earlier
    detections, checkpoint evaluations and verdict, and finish its run (call
    inside a transaction): a few bulk statements for any number of results.
    A session deleted meanwhile is left out."""
    # One writer per session at a time (in id order, so two writers cannot
    # deadlock): two replays of the same pair (a duplicate delivery) must not
    # both delete, then both insert.
    locked = Session.objects.select_for_update().filter(pk__in={r.session.pk for r in results}).order_by("pk")
    alive = set(locked.values_list("pk", flat=True))
    results = [result for result in results if result.session.pk in alive]
    if not results:
        return
    pairs = Q()
    for profile in {result.profile for result in results}:
        ids = [result.session.pk for result in results if result.profile == profile]
        pairs |= Q(profile=profile, session_id__in=ids)
    Detection.objects.filter(pairs).delete()
    CheckpointEvaluation.objects.filter(pairs).delete()
    SessionVerdict.objects.filter(pairs).delete()
    stored = _found_rows_store(
        [(r.session.pk, r.profile, r.run, r.replay.found, r.replay.checkpoints) for r in results]
    )
    SessionVerdict.objects.bulk_create(
        (
            SessionVerdict(
                session_id=result.session.pk,
                profile=result.profile,
                looped=bool(rows),
                detection_count=len(rows),
                **_verdict_first_fields(rows[0] if rows else None),
            )
            for result, rows in zip(results, stored, strict=True)
        ),
        batch_size=ROW_BATCH,
    )
    _runs_finished(
        [(result.run, ReplayRun.State.DONE, result.summary, "") for result in results if result.run is not None]
    )
    # A long session stored without a layout (the scan after its import, or
    # stored before layouts were kept) gets it here, once: from its replay's read.
    built = {result.session.pk: result.layout for result in results if result.layout is not None}
    session_layouts_update((result.session for result in results), built)


def found_store(
    *,
    session: Session,
    profile: str,
    run: ReplayRun | None,
    found: list[tuple[int, Found]],
    checkpoints: list[tuple[int, Checkpoint]],
) -> list[Detection]:
    """What the detectors found live, added to the session × profile's rows
    (`_found_rows_store`, as a replay stores them) and counted on its
    verdict. The detection rows stored, in firing order."""
    (rows,) = _found_rows_store([(session.pk, profile, run, found, checkpoints)])
    if rows:
        session_verdict_add(session=session, profile=profile, rows=rows)
    return rows


def _found_rows_store(
    stores: list[tuple[int, str, ReplayRun | None, list[tuple[int, Found]], list[tuple[int, Checkpoint]]]],
) -> list[list[Detection]]:
    """The one writer of what the detectors found, for replay and live ingest
    alike: for each (session id, profile, run, found, checkpoints), each
    detection and checkpoint evaluation (with the seq of the event that fired
    it) as a row of the session × profile; one bulk INSERT per table for
    them all. The detection rows stored of each, in firing order."""
    rows = Detection.objects.bulk_create(
        [
            Detection(session_id=session_id, profile=profile, run=run, event_seq=seq, **asdict(d))
            for session_id, profile, run, found, _ in stores
            for seq, d in found
        ],
        batch_size=ROW_BATCH,
    )
    CheckpointEvaluation.objects.bulk_create(
        (
            CheckpointEvaluation(
                session_id=session_id, profile=profile, run=run, event_seq=seq, **_checkpoint_fields(c)
            )
            for session_id, profile, run, _, checkpoints in stores
            for seq, c in checkpoints
        ),
        batch_size=ROW_BATCH,
    )
    stored, taken = [], 0
    for _, _, _, found, _ in stores:
        stored.append(rows[taken : taken + len(found)])
        taken += len(found)
    return stored


def _checkpoint_fields(checkpoint: Checkpoint) -> dict:
    values = asdict(checkpoint)
    values["check_name"] = values.pop("check")  # renamed in the model: Model.check() is Django's
    return values


def _verdict_first_fields(first: Detection | None) -> dict:
    """A verdict's fields naming its first detection (none when clean)."""
    if first is None:
        return {}
    return {
        "first_detection_id": first.pk,
        "first_detection_seq": first.event_seq,
        "first_detection_channel": first.channel,
        "first_detection_detector": first.detector,
        "first_detection_type": first.type,
        "first_detection_start": first.start,
        "first_detection_at": first.at,
    }


def session_verdict_add(*, session: Session, profile: str, rows: list[Detection]) -> None:
    """Count newly stored detection rows (in firing order) on the session ×
    profile's verdict, creating it (clean when there are none); the first row
    ever stored stays its first detection. Call inside the transaction that
    stored the rows."""
    fields = _verdict_first_fields(rows[0] if rows else None)
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
    """`_runs_finished` for one run."""
    _runs_finished([(run, state, summary, error)], holding=holding)


def _runs_finished(
    finished: list[tuple[ReplayRun, str, ReplaySummary | None, str]], *, holding: Q | None = None
) -> None:
    """Mark each run (with its state, summary and error) finished and count
    it on its job (call inside a transaction), if it is still `holding`
    (default: running). A duplicate of a task that finishes the same run
    again counts nothing."""
    if not finished:
        return
    holding = Q(state=ReplayRun.State.RUNNING) if holding is None else holding
    ids = [run.pk for run, *_ in finished]
    held = set(
        ReplayRun.objects.select_for_update().filter(holding, pk__in=ids).order_by("pk").values_list("pk", flat=True)
    )
    now, counts = timezone.now(), {}
    ended, found = [], []  # the runs held; those of them whose summary holds a detection
    for run, state, summary, error in finished:
        if run.pk not in held:
            continue
        run.state, run.error, run.finished = state, error, now
        ended.append(run)
        if summary is not None and summary.detection_count:
            for field, value in asdict(summary).items():
                setattr(run, field, value)
            found.append(run)
        done, failed = counts.get(run.job_id, (0, 0))
        counts[run.job_id] = (done + 1, failed + (state == ReplayRun.State.FAILED))
    # The runs' ends and summaries in one round trip (`rows_update`: an
    # UPDATE from arrays each, where Django's `bulk_update` built a CASE per
    # field and run). A run finishes once (from queued or running), so its
    # summary fields still hold their defaults, which a clean replay's
    # summary keeps: only those that found something are written.
    rows_update((ReplayRun, ["state", "error", "finished"], ended), (ReplayRun, SUMMARY_FIELDS, found))
    for job_id, (done, failed) in counts.items():
        # The last run to finish closes a running job, failed if every run
        # failed: in the same UPDATE (its right-hand sides read the row as it was).
        closes = Q(state=ReplayJob.State.RUNNING, done=F("total") - done)
        ReplayJob.objects.filter(pk=job_id).update(
            done=F("done") + done,
            failed=F("failed") + failed,
            state=Case(
                When(closes & Q(failed=F("total") - failed), then=Value(ReplayJob.State.FAILED)),
                When(closes, then=Value(ReplayJob.State.DONE)),
                default=F("state"),
            ),
            finished=Case(When(closes, then=Value(now)), default=F("finished")),
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
    """`replay_job_sessions_execute` for one session."""
    replay_job_sessions_execute(job_id=job_id, session_ids=[session_id], claim=claim)


def replay_job_sessions_execute(*, job_id: int, session_ids: list[int], claim: str) -> None:
    """Replay a chunk of the job's sessions (one task's), each through every
    profile of the job whose run this task can claim (see
    `replay_run_claim`), its events read once for all of them, and with the
    next sessions' (`sessions_event_streams`). A session's runs are claimed
    when the task reaches it, so a job cancelled meanwhile stops at the next
    session, and one deleted meanwhile is skipped. The chunk's results are
    stored, its runs finished and counted, in one transaction at the end; a
    run that fails is recorded as failed and the others go on. Database
    outages propagate, for the task to retry (it re-claims the same runs)."""
    sessions = Session.objects.only("project_id", "model", "event_count").in_bulk(session_ids)
    chunk = [(pk, sessions[pk].event_count) for pk in session_ids if pk in sessions]
    runs_of: dict[int, list[ReplayRun]] = {}
    for run in ReplayRun.objects.filter(job_id=job_id, session_id__in=session_ids).order_by("id"):
        runs_of.setdefault(run.session_id, []).append(run)
    unlaid = sessions_without_layout(sessions.values())
    configs: dict[int, Config] = {}
    results: list[_Result] = []
    failed: list[tuple[ReplayRun, str, ReplaySummary | None, str]] = []
    for session_id, events in sessions_event_streams(chunk):
        claimed = _session_runs_claim(runs_of.get(session_id, []), claim=claim)
        if not claimed:
            continue
        if not results and not failed:
            _job_started(job_id)
        session = sessions[session_id]
        if session.project_id not in configs:
            configs[session.project_id] = replay_config(session.project_id)
        replays, layout = _profile_replays(
            session,
            [run.profile for run in claimed],
            configs[session.project_id],
            events,
            LayoutBuilder() if session_id in unlaid else None,
        )
        for run, replay in zip(claimed, replays, strict=True):
            if isinstance(replay, Exception):
                failed.append((run, ReplayRun.State.FAILED, None, f"{type(replay).__name__}: {replay}"))
            else:
                results.append(_Result(session, run.profile, run, replay, layout))
    if results or failed:
        _chunk_store(results, failed)
        _progress(job_id)


def _chunk_store(results: list[_Result], failed: list[tuple[ReplayRun, str, ReplaySummary | None, str]]) -> None:
    """Store a chunk's results and finish its failed runs in one transaction;
    should the database refuse one result (anything but an outage), each is
    stored in a transaction of its own, and the one refused fails its run."""
    try:
        with transaction.atomic():
            _results_store(results)
            _runs_finished(failed)
        return
    except (OperationalError, InterfaceError):
        raise
    except Exception:  # noqa: BLE001 - storing each result alone finds out which
        pass
    for result in results:
        try:
            with transaction.atomic():
                _results_store([result])
        except (OperationalError, InterfaceError):
            raise
        except Exception as exc:  # noqa: BLE001 - this result's alone
            failed.append((result.run, ReplayRun.State.FAILED, None, f"{type(exc).__name__}: {exc}"))
    with transaction.atomic():
        _runs_finished(failed)


def _session_runs_claim(runs: list[ReplayRun], *, claim: str) -> list[ReplayRun]:
    """Those of a session's runs (as read when the chunk began) this task
    takes (see `replay_run_claim`), in id order: one UPDATE, committed
    without waiting for the disk. A claim is there to be seen by a cancel
    and by the stale sweep; one lost in a crash of the database leaves its
    runs queued, where this task (its connection lost, retried) or the
    sweep claims them again, while waiting for the disk took 5-12 ms a
    session, more than the replay of a short one (BENCHMARKS section 3)."""
    taken = rows_claim(ReplayRun, [run.pk for run in runs], claim=claim, now=timezone.now(), durable=False)
    return [run for run in runs if run.pk in taken]


def replay_session_runs_abandon(*, job_id: int, session_id: int, claim: str, error: str) -> None:
    """Record as failed the session's runs a task gave up on (its own, or
    still queued), so the job still finishes and says why."""
    for run in job_runs_of_session(job_id=job_id, session_id=session_id):
        with transaction.atomic():
            _job_started(job_id)
            _run_finished(run, ReplayRun.State.FAILED, error=error, holding=_claimable(claim))
    _progress(job_id)


def replay_run_deleted(*, run: ReplayRun) -> None:
    """Count a run deleted before it finished (its session deleted while its
    job was queued or running) as finished, cancelled rather than failed, so
    the job still reaches its total and ends. Call inside the deleting
    transaction, with the run as it was read for deletion: a task that
    finished it meanwhile counted it, and it is not counted again."""
    if run.state not in (ReplayRun.State.QUEUED, ReplayRun.State.RUNNING):
        return
    _job_started(run.job_id)
    unfinished = Q(state__in=(ReplayRun.State.QUEUED, ReplayRun.State.RUNNING))
    _run_finished(run, ReplayRun.State.CANCELLED, error="session deleted", holding=unfinished)
    transaction.on_commit(partial(_progress, run.job_id))


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
    by_job: dict[int, list[int]] = {}
    for job_id, session_id in runs.values_list("job_id", "session_id").distinct().order_by("job_id", "session_id"):
        by_job.setdefault(job_id, []).append(session_id)
    for job_id, ids in by_job.items():
        for start in range(0, len(ids), SESSIONS_PER_TASK):
            chunk = ids[start : start + SESSIONS_PER_TASK]
            replay_job_sessions_execute(job_id=job_id, session_ids=chunk, claim=f"local-{job_id}")


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
    sessions = job_queued_sessions(job_id=job_id, after_session_id=after_session_id, limit=DISPATCH_CHUNK)
    with replay_session_runs.app.producer_or_acquire() as producer:
        for session_ids in task_chunks(sessions, profiles=len(job.profiles)):
            replay_session_runs.apply_async((job_id, session_ids), queue=queue, producer=producer)
    if len(sessions) == DISPATCH_CHUNK:
        _dispatch(job_id, sessions[-1][0], queue)


def task_chunks(sessions: list[tuple[int, int]], *, profiles: int) -> Iterator[list[int]]:
    """The ids of `sessions` (id, event count) in chunks of one session task
    each, in order, of decreasing size: a chunk's share is a third of the
    events fed to monitors (events × `profiles`) left, between
    MIN_TASK_EVENTS and TASK_EVENTS. A session whose middle falls past its
    chunk's share opens the next chunk once the chunk holds half a share
    (smaller, it takes the session: no chunk of a few events beside a large
    session), as does one past SESSIONS_PER_TASK."""
    left = sum(events for _, events in sessions) * profiles
    chunk, fed = [], 0
    for session_id, events in sessions:
        events *= profiles
        share = min(max(left / TASK_SHARE_OF_LEFT, MIN_TASK_EVENTS), TASK_EVENTS)
        if chunk and (share <= 2 * fed and 2 * fed + events > 2 * share or len(chunk) == SESSIONS_PER_TASK):
            yield chunk
            left -= fed
            chunk, fed = [], 0
        chunk.append(session_id)
        fed += events
    if chunk:
        yield chunk


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
    return jobs_requeue(
        "replay",
        stale,
        reset=lambda job_id: ReplayRun.objects.filter(
            job_id=job_id, state=ReplayRun.State.RUNNING, started__lt=cutoff
        ).update(state=ReplayRun.State.QUEUED, claimed_by=""),
        enqueue=_dispatch,
    )


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
