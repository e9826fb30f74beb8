"""Reads of the replay app: profiles a replay may use, sessions a selection
picks, jobs, and stored detections."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Case, Exists, OuterRef, Prefetch, Q, QuerySet, Value, When
from django.db.models.lookups import Exact

from detector.config import Config
from loopguard_site.accounts.access import in_visible_projects, object_for
from loopguard_site.accounts.models import Role
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import project_profiles, sessions_matching

from .models import Detection, ReplayJob, ReplayRun, ReplayState, SessionVerdict

# A replay's filter key -> the session selectors' argument.
SESSION_FILTER_KEYS = {
    "model": "model",
    "format": "source_format",
    "tag": "tag",
    "state": "state",
    "q": "q",
    "has_detections": "has_detections",
}
VERDICTS = ("loop", "clean", "unscanned")  # the session list's `verdict` filter


def replay_config(project_id: int | None = None) -> Config:
    """The profiles a project's replays may run: its sessions' profiles
    (`transcripts.selectors.project_profiles`)."""
    return project_profiles(project_id)


# Reviewers' labels live in the review app, a layer above this one (a label
# points at one of replay's detections), so it hands its reader of sessions'
# labelled truth in when the apps load (`ReviewConfig.ready`).
_labelled_truths: Callable[[Iterable[int]], Mapping[int, Any]] | None = None


def labelled_truths_reader_set(reader: Callable[[Iterable[int]], Mapping[int, Any]]) -> None:
    """`reader(session_ids)`: the `review.truth.SessionTruth` of each of
    those sessions that reviewers labelled."""
    global _labelled_truths
    _labelled_truths = reader


def labelled_truths(session_ids: Iterable[int]) -> Mapping[int, Any]:
    """Reviewers' truth of the labelled ones of the sessions (a `label`,
    loop or normal, and the labelled `loop_starts` by channel)."""
    return {} if _labelled_truths is None else _labelled_truths(session_ids)


def profile_names(project_id: int | None = None) -> list[str]:
    return list(replay_config(project_id).profiles)


def profile_names_of(project_ids: Iterable[int]) -> list[str]:
    """The profiles any of the projects may replay: the built-in ones, then
    the stored ones of each project."""
    names = dict.fromkeys(profile_names())
    for project_id in project_ids:
        names.update(dict.fromkeys(profile_names(project_id)))
    return list(names)


def session_ids_matching(project_id: int, session_filter: dict) -> Iterator[int]:
    """Ids of the project's sessions the session list's filter picks (every
    one for `{}`), oldest first. Keys: `model`, `format`, `tag`, `state`, `q`
    and `has_detections`, as `GET /api/sessions` reads them."""
    kwargs = {SESSION_FILTER_KEYS[key]: value for key, value in session_filter.items()}
    has_detections = kwargs.pop("has_detections", None)
    sessions = sessions_by_results(sessions_matching(project=project_id, **kwargs), has_detections=has_detections)
    sessions = sessions.order_by("id").values_list("id", flat=True)
    return sessions.iterator(chunk_size=2000)


def sessions_by_results(
    sessions: QuerySet[Session],
    *,
    has_detections: bool | None = None,
    profile: str = "",
    verdict: str = "",
    detector: str = "",
    detection_type: str = "",
) -> QuerySet[Session]:
    """Those of `sessions` with (or without) stored detections, and those
    whose results match `verdict` (one of `VERDICTS`), `detector` and
    `detection_type` (empty means any): the results of `profile`, or by
    default each session's own scan profile (`Session.profile`; any profile
    for a session that has none)."""
    if has_detections is not None:
        detected = Exists(Detection.objects.filter(session=OuterRef("pk")))
        sessions = sessions.filter(detected if has_detections else ~detected)
    if verdict:
        sessions = sessions.filter(_verdict_filter(verdict, profile))
    if detector or detection_type:
        found = Detection.objects.all()
        if detector:
            found = found.filter(detector=detector)
        if detection_type:
            found = found.filter(type=detection_type)
        sessions = sessions.filter(_of_profile(found, profile))
    return sessions


def sessions_with_verdicts(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """`sessions`, each with its verdicts (prefetched, by profile) and
    `scanning` (a replay of it is queued or running)."""
    return sessions.prefetch_related(
        Prefetch("verdicts", queryset=SessionVerdict.objects.order_by("profile"))
    ).annotate(
        scanning=Exists(
            ReplayRun.objects.filter(session=OuterRef("pk"), state__in=[ReplayState.QUEUED, ReplayState.RUNNING])
        )
    )


def _of_profile(results: QuerySet, profile: str) -> Q:
    """Sessions with a row of `results` (verdicts or detections) under
    `profile`, or by default under their own scan profile (any profile for a
    session that has none)."""
    mine = results.filter(session=OuterRef("pk"))
    if profile:
        return Q(Exists(mine.filter(profile=profile)))
    # One EXISTS, not two OR'd: the database can then join it as a semi-join.
    return Q(Exists(mine.filter(Q(profile=OuterRef("profile")) | Exact(OuterRef("profile"), ""))))


def _verdict_filter(verdict: str, profile: str) -> Q:
    if verdict == "loop":
        return _of_profile(SessionVerdict.objects.filter(looped=True), profile)
    scanned = _of_profile(SessionVerdict.objects.all(), profile)
    if verdict == "clean":
        return scanned & ~_of_profile(SessionVerdict.objects.filter(looped=True), profile)
    return ~scanned


def existing_session_ids(project_id: int, session_ids: list[int]) -> set[int]:
    """Those of `session_ids` that are sessions of the project."""
    return set(Session.objects.filter(project_id=project_id, pk__in=session_ids).values_list("id", flat=True))


def replay_job_get(job_id: int) -> ReplayJob | None:
    return ReplayJob.objects.filter(pk=job_id).first()


def replay_job_for(user: AbstractBaseUser, job_id: int, role: str = Role.VIEWER) -> ReplayJob:
    """The replay job if the user has `role` in its project (accounts.access refuses otherwise)."""
    return object_for(user, ReplayJob.objects.all(), job_id, role=role, noun="replay")


def jobs_visible_to(user: AbstractBaseUser) -> QuerySet[ReplayJob]:
    """The jobs of the user's projects, newest first."""
    jobs = in_visible_projects(ReplayJob.objects.select_related("created_by", "project"), user)
    return jobs.order_by("-created", "-id")


def recent_jobs(user: AbstractBaseUser, limit: int = 20) -> list[ReplayJob]:
    """The newest jobs of the user's projects."""
    return list(jobs_visible_to(user)[:limit])


def job_runs_of_session(*, job_id: int, session_id: int) -> list[ReplayRun]:
    return list(ReplayRun.objects.filter(job_id=job_id, session_id=session_id).select_related("session").order_by("id"))


def job_queued_sessions(*, job_id: int, after_session_id: int, limit: int) -> list[tuple[int, int]]:
    """(id, event count) of the next `limit` sessions (by id, after
    `after_session_id`) with a queued run."""
    runs = ReplayRun.objects.filter(job_id=job_id, session_id__gt=after_session_id, state=ReplayRun.State.QUEUED)
    sessions = runs.order_by("session_id").values_list("session_id", "session__event_count").distinct()
    return list(sessions[:limit])


def session_detections(*, session_id: int, profile: str | None = None) -> QuerySet[Detection]:
    """A session's stored detections in firing order (by profile first)."""
    detections = Detection.objects.filter(session_id=session_id)
    if profile:
        detections = detections.filter(profile=profile)
    return detections.order_by("profile", "event_seq", "id")


def detection_to_dict(detection: Detection) -> dict:
    """A stored detection as event-format.md defines it, plus `id` and `profile`."""
    data = {
        "id": detection.pk,
        "profile": detection.profile,
        "detector": detection.detector,
        "type": detection.type,
        "channel": detection.channel,
        "start": detection.start,
        "end": detection.end,
        "at": detection.at,
        "unit": detection.unit,
        "period": detection.period,
        "repeats": detection.repeats,
        "action": detection.action,
        "message": detection.message,
        "turn": detection.turn,
    }
    if detection.extra:
        data["extra"] = detection.extra
    return data


RESULT_ROWS = 500  # runs a finished job's page lists


@dataclass(frozen=True)
class RunResult:
    """One run of a finished job as its results table shows it."""

    run: ReplayRun
    first_detection_id: int | None  # the stored first detection of its session × profile, to link to
    delay: int | None  # `at` of its first detection minus the labelled loop start on that channel


def job_results(job: ReplayJob, limit: int = RESULT_ROWS) -> tuple[list[RunResult], int]:
    """The job's runs, loops first (then by session and profile order), at
    most `limit` of them, and how many there are. Three queries whatever
    the job's size: the runs with their sessions, the verdicts (for the
    stored first detection's id) and the reviewers' labels (for delays)."""
    runs = job.runs.select_related("session").order_by(
        Case(When(detection_count__gt=0, then=Value(0)), default=Value(1)), "session_id", "id"
    )
    total = job.total
    chosen = list(runs[:limit])
    session_ids = {run.session_id for run in chosen}
    verdicts = {
        (session_id, profile): first
        for session_id, profile, first in SessionVerdict.objects.filter(
            session_id__in=session_ids, profile__in=job.profiles
        ).values_list("session_id", "profile", "first_detection_id")
    }
    truths = labelled_truths(session_ids)
    results = []
    for run in chosen:
        truth = truths.get(run.session_id)
        start = truth.loop_starts.get(run.first_detection_channel) if truth and run.detection_count else None
        delay = run.first_detection_at - start if start is not None and run.first_detection_at is not None else None
        first = verdicts.get((run.session_id, run.profile)) if run.detection_count else None
        results.append(RunResult(run=run, first_detection_id=first, delay=delay))
    return results, total
