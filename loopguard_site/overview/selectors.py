"""Reads of the overview dashboard: every figure is one aggregate query
(GROUP BY in the database) over the projects the user reaches, never a loop
over rows in Python. `projects` is what accounts.access.visible_project_ids
gives for the user (None: every project), asked once per page.

On PostgreSQL the counts come from the tallies its triggers keep
(models.py): a few hundred rows, whatever the number of sessions. The
embedded (SQLite) lab aggregates its sessions, verdicts, detections and
labels directly."""

from __future__ import annotations

import datetime as dt

from django.db import connection
from django.db.models import CharField, Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Concat, TruncDate
from django.utils import timezone

from loopguard_site.profiles.models import TuningJob
from loopguard_site.replay.models import Detection, SessionVerdict
from loopguard_site.review.models import Label, LabelKind
from loopguard_site.transcripts.models import Session

from .models import DetectionDayTally, ModelTally

LIVE_STATES = (Session.State.LIVE, Session.State.LOOPING, Session.State.STALLED)  # open now
DETECTION_DAYS = 30  # the detections-per-day chart's window, ending today (UTC)
RECENT_JOBS = 8
LIVE_LISTED = 10

Projects = list[int] | None


def _in(rows: QuerySet, projects: Projects, project_field: str = "project") -> QuerySet:
    return rows if projects is None else rows.filter(**{f"{project_field}__in": projects})


def _tallied() -> bool:
    """Whether the database keeps the tallies (migrations/0001_tallies.py)."""
    return connection.vendor == "postgresql"


def session_totals(per_model: list[dict], live_states: list[dict], projects: Projects) -> dict[str, int]:
    """The headline counts: sessions and sessions open live now (summed from
    sessions_per_model's and live_state_counts' rows), and reviewers' labels."""
    if _tallied():
        labels = _in(ModelTally.objects.all(), projects, "project_id").aggregate(n=Sum("labels"))["n"] or 0
    else:
        labels = _in(Label.objects.all(), projects, "session__project").count()
    return {
        "sessions": sum(row["sessions"] for row in per_model),
        "live": sum(row["sessions"] for row in live_states),
        "labels": labels,
    }


def sessions_per_model(projects: Projects) -> list[dict]:
    """Per model (most sessions first): `model`, `sessions`."""
    if _tallied():
        tallies = _in(ModelTally.objects.filter(profile=""), projects, "project_id").values("model")
        rows = tallies.annotate(sessions=Sum("sessions")).filter(sessions__gt=0)
    else:
        rows = _in(Session.objects.all(), projects).values("model").annotate(sessions=Count("id"))
    return list(rows.order_by("-sessions", "model"))


def verdicts_per_model(projects: Projects) -> list[dict]:
    """Per model × profile that scanned some of its sessions: `model`,
    `profile`, `scanned` (sessions with a verdict), `looped` (of them,
    those a detector fired on) and `detections` (on them all)."""
    if _tallied():
        tallies = _in(ModelTally.objects.exclude(profile=""), projects, "project_id").values("model", "profile")
        rows = tallies.annotate(
            scanned=Sum("scanned"), looped=Sum("looped"), detections=Sum("detections"), session__model=F("model")
        ).filter(scanned__gt=0)
    else:
        verdicts = _in(SessionVerdict.objects.all(), projects, "session__project")
        rows = verdicts.values("session__model", "profile").annotate(
            scanned=Count("id"), looped=Count("id", filter=Q(looped=True)), detections=Sum("detection_count")
        )
    return [
        {"model": row["session__model"], "profile": row["profile"], "scanned": row["scanned"],
         "looped": row["looped"], "detections": row["detections"]}
        for row in rows.order_by("session__model", "profile")
    ]  # fmt: skip


def detection_window(today: dt.date | None = None) -> tuple[dt.date, dt.date]:
    """The first and last day (UTC) of the detections-per-day chart."""
    today = today or timezone.now().date()
    return today - dt.timedelta(days=DETECTION_DAYS - 1), today


def detections_per_day(projects: Projects, first_day: dt.date) -> list[dict]:
    """Detections (under every profile) of the sessions created since
    `first_day` (UTC), per day the session was created, detector and type:
    `day`, `detector`, `type`, `detections`."""
    if _tallied():
        tallies = _in(DetectionDayTally.objects.filter(day__gte=first_day), projects, "project_id")
        rows = tallies.values("day", "detector", "type").annotate(detections=Sum("detections")).filter(detections__gt=0)
        return list(rows.order_by("day", "detector", "type"))
    since = dt.datetime.combine(first_day, dt.time.min, tzinfo=dt.UTC)
    detections = _in(Detection.objects.all(), projects, "session__project")
    rows = (
        detections.filter(session__created__gte=since)
        .annotate(day=TruncDate("session__created", tzinfo=dt.UTC))
        .values("day", "detector", "type")
        .annotate(detections=Count("id"))
        .order_by("day", "detector", "type")
    )
    return list(rows)


def live_state_counts(projects: Projects) -> list[dict]:
    """Sessions open now per live state (every state listed, zeros too)."""
    sessions = _in(Session.objects.filter(state__in=LIVE_STATES), projects)
    counts = dict(sessions.values_list("state").annotate(n=Count("id")).order_by())
    return [{"state": state, "sessions": counts.get(state, 0)} for state in LIVE_STATES]


def live_sessions(projects: Projects, limit: int = LIVE_LISTED) -> list[Session]:
    """The newest sessions open now."""
    sessions = _in(Session.objects.filter(state__in=LIVE_STATES), projects)
    return list(sessions.select_related("live_stream").order_by("-created", "-id")[:limit])


def label_progress(projects: Projects, verdicts: list[dict]) -> list[dict]:
    """Per model × profile with detections (`verdicts`: verdicts_per_model's
    rows): `model`, `profile`, `detections`, `labelled` (detections some
    reviewer labelled, at most `detections`), and the reviewers' detection
    labels: `true_loop`, `false_positive` (one per reviewer and detection)."""
    if _tallied():
        tallies = _in(ModelTally.objects.exclude(profile=""), projects, "project_id").values("model", "profile")
        judged = tallies.annotate(
            labelled=Sum("labelled"),
            true_loop=Sum("true_loop"),
            false_positive=Sum("false_positive"),
            session__model=F("model"),
        )
    else:
        labels = _in(Label.objects.exclude(profile=""), projects, "session__project")
        judged = labels.values("session__model", "profile").annotate(
            labelled=Count(Concat("session_id", Value(" "), "item", output_field=CharField()), distinct=True),
            true_loop=Count("id", filter=Q(label=LabelKind.TRUE_LOOP)),
            false_positive=Count("id", filter=Q(label=LabelKind.FALSE_POSITIVE)),
        )
    by_key = {(row["session__model"], row["profile"]): row for row in judged.order_by()}
    rows = []
    for row in (row for row in verdicts if row["detections"]):
        found = by_key.get((row["model"], row["profile"]), {})
        rows.append(
            {
                "model": row["model"],
                "profile": row["profile"],
                "detections": row["detections"],
                "labelled": min(found.get("labelled", 0), row["detections"]),
                "true_loop": found.get("true_loop", 0),
                "false_positive": found.get("false_positive", 0),
            }
        )
    return rows


def recent_tuning_jobs(projects: Projects, limit: int = RECENT_JOBS) -> list[TuningJob]:
    jobs = _in(TuningJob.objects.select_related("created_by"), projects)
    return list(jobs.order_by("-created", "-id")[:limit])
