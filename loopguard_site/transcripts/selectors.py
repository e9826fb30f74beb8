from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from detector.config import Config, builtin_config
from loopguard_site.accounts.access import in_visible_projects, object_for
from loopguard_site.accounts.models import Role
from loopguard_site.replay.models import Detection, ReplayRun, ReplayState, SessionVerdict
from loopguard_site.review.models import Label, LabelKind

from .event_rows import event_from_json
from .models import Event, Session, Tag

# sort key (as `?sort=` takes it; prefix `-` for descending) -> model field
SESSION_SORTS = {"created": "created", "title": "title", "model": "model", "events": "event_count"}
DEFAULT_SORT = "-created"
VERDICTS = ("loop", "clean", "unscanned")
LABEL_FILTERS = ("unlabelled", "labelled", *LabelKind.values)
OPEN_STATES = (Session.State.LIVE, Session.State.LOOPING, Session.State.STALLED)  # `live=1`


# The stored profiles live in the profiles app, layers above (it tunes them
# on reviewers' labels of replays), so it hands its reader in when the apps
# load (`ProfilesConfig.ready`).
_stored_profiles: Callable[[int], Config] | None = None


def stored_profiles_reader_set(reader: Callable[[int], Config]) -> None:
    """`reader(project_id)`: the built-in profiles and the latest version of
    every profile stored in the project."""
    global _stored_profiles
    _stored_profiles = reader


def project_profiles(project_id: int | None = None) -> Config:
    """The profiles the project's sessions are scanned and replayed with:
    the built-in ones and the latest version of every one stored in the
    project (None: the built-in ones only, among which a live session's
    profile is)."""
    if not project_id or _stored_profiles is None:
        return builtin_config()
    return _stored_profiles(project_id)


def scan_profile_name(project_id: int | None, model: str) -> str:
    """The profile a session of the project with this model is scanned with
    when it arrives: the first stored profile, then built-in one, whose model
    globs match it (as a live session's is chosen), else `default`."""
    return project_profiles(project_id).select(model=model).name


def sessions_visible_to(user: AbstractBaseUser) -> QuerySet[Session]:
    """The sessions of the projects the user reaches (accounts.access)."""
    return in_visible_projects(Session.objects.all(), user)


def sort_choices() -> list[str]:
    """Every accepted `sort` value: each key ascending and descending."""
    return [f"{sign}{key}" for key in SESSION_SORTS for sign in ("-", "")]


def session_list(
    *,
    among: QuerySet[Session] | None = None,
    project: int | None = None,
    model: str = "",
    source_format: str = "",
    tag: str = "",
    state: str = "",
    has_detections: bool | None = None,
    q: str = "",
    sort: str = DEFAULT_SORT,
    profile: str = "",
    verdict: str = "",
    detector: str = "",
    detection_type: str = "",
    label: str = "",
    created: date | None = None,
    live: bool = False,
) -> QuerySet[Session]:
    """Sessions of `among` (a user's: `sessions_visible_to`;
    None: every session) matching every filter given (empty means any),
    sorted by `sort` (a `sort_choices()` value; ties broken by id, same
    direction). `q` searches title, model and tag names, case-insensitively.

    `verdict` (one of `VERDICTS`), `detector` and `detection_type` read the
    results of `profile`, or by default each session's own scan profile
    (`Session.profile`; any profile for a session that has none). `label`
    (one of `LABEL_FILTERS`) reads reviewers' labels of the session and its
    detections; `created` is a UTC day; `live` keeps the open live sessions.
    Each row carries its verdicts (prefetched, by profile), `scanning` (a
    replay of it is queued or running) and its label kinds (`labelled_*`)."""
    sessions = (Session.objects.all() if among is None else among).select_related("uploader", "project")
    sessions = sessions.prefetch_related("tags")
    if project is not None:
        sessions = sessions.filter(project_id=project)
    if model:
        sessions = sessions.filter(model=model)
    if source_format:
        sessions = sessions.filter(source_format=source_format)
    if state:
        sessions = sessions.filter(state=state)
    if tag:
        sessions = sessions.filter(Exists(Tag.objects.filter(sessions=OuterRef("pk"), name=tag)))
    if has_detections is not None:
        detected = Exists(Detection.objects.filter(session=OuterRef("pk")))
        sessions = sessions.filter(detected if has_detections else ~detected)
    if q:
        tagged = Exists(Tag.objects.filter(sessions=OuterRef("pk"), name__icontains=q))
        sessions = sessions.filter(Q(title__icontains=q) | Q(model__icontains=q) | tagged)
    if verdict:
        sessions = sessions.filter(_verdict_filter(verdict, profile))
    if detector or detection_type:
        found = Detection.objects.all()
        if detector:
            found = found.filter(detector=detector)
        if detection_type:
            found = found.filter(type=detection_type)
        sessions = sessions.filter(_of_profile(found, profile))
    if label:
        sessions = sessions.filter(_label_filter(label))
    if created is not None:
        day = datetime.combine(created, time.min, tzinfo=timezone.get_fixed_timezone(0))
        sessions = sessions.filter(created__gte=day, created__lt=day + timedelta(days=1))
    if live:
        sessions = sessions.filter(state__in=OPEN_STATES)
    sessions = sessions.prefetch_related(
        Prefetch("verdicts", queryset=SessionVerdict.objects.order_by("profile"))
    ).annotate(
        scanning=Exists(
            ReplayRun.objects.filter(session=OuterRef("pk"), state__in=[ReplayState.QUEUED, ReplayState.RUNNING])
        ),
        **{f"labelled_{kind}": Exists(Label.objects.filter(session=OuterRef("pk"), label=kind)) for kind in LabelKind},
    )
    sign = "-" if sort.startswith("-") else ""
    field = SESSION_SORTS[sort.removeprefix("-")]
    return sessions.order_by(f"{sign}{field}", f"{sign}id")


def _of_profile(results: QuerySet, profile: str) -> Q:
    """Sessions with a row of `results` (verdicts or detections) under
    `profile`, or by default under their own scan profile (any profile for a
    session that has none)."""
    mine = results.filter(session=OuterRef("pk"))
    if profile:
        return Q(Exists(mine.filter(profile=profile)))
    own = Q(Exists(mine.filter(profile=OuterRef("profile"))))
    return (Q(profile="") & Q(Exists(mine))) | (~Q(profile="") & own)


def _verdict_filter(verdict: str, profile: str) -> Q:
    if verdict == "loop":
        return _of_profile(SessionVerdict.objects.filter(looped=True), profile)
    scanned = _of_profile(SessionVerdict.objects.all(), profile)
    if verdict == "clean":
        return scanned & ~_of_profile(SessionVerdict.objects.filter(looped=True), profile)
    return ~scanned


def _label_filter(label: str) -> Q:
    labels = Label.objects.filter(session=OuterRef("pk"))
    if label == "unlabelled":
        return ~Q(Exists(labels))
    if label == "labelled":
        return Q(Exists(labels))
    return Q(Exists(labels.filter(label=label)))


def session_for(user: AbstractBaseUser, pk: int, role: str = Role.VIEWER) -> Session:
    """The session `pk` if `user` has `role` in its project (accounts.access
    refuses otherwise: Http404 or PermissionDenied)."""
    return object_for(user, Session.objects.prefetch_related("tags"), pk, role=role, noun="session")


def session_events(session: Session, *, start: int = 1, limit: int = 1000) -> tuple[list[dict], int | None]:
    """Up to `limit` events from seq `start` on, each with its `seq`, and the
    seq to ask for next (None at the end)."""
    rows = list(
        Event.objects.filter(session=session, seq__gte=start).order_by("seq").values_list("seq", "data")[: limit + 1]
    )
    events = [{**data, "seq": seq} for seq, data in rows[:limit]]  # the stored seq wins over an event's own field
    return events, (rows[limit][0] if len(rows) > limit else None)


EVENT_READ_CHUNK = 10_000  # events per query of `session_event_stream`


def session_event_stream(session_id: int) -> Iterator[tuple[int, dict]]:
    """Every event of the session as (seq, event), in seq order: the whole
    session for a replay. Read as JSON text in keyset chunks on the (session,
    seq) index and decoded by `event_from_json`: about 2.5 times the rate of
    the ORM's JSON rows through a server-side cursor, which PostgreSQL
    materializes first outside a transaction."""
    after, chunk = 0, EVENT_READ_CHUNK
    while True:
        events = Event.objects.filter(session_id=session_id, seq__gt=after).order_by("seq")
        rows = list(events.annotate(text=Cast("data", TextField())).values_list("seq", "text")[:chunk])
        for seq, text in rows:
            yield seq, event_from_json(text)
        if len(rows) < chunk:
            return
        after = rows[-1][0]


def session_filter_options(among: QuerySet[Session]) -> dict[str, list[str]]:
    """The values the list's filter menus offer: models, formats and tags in
    use by the sessions of `among`."""
    return {
        "models": list(among.exclude(model="").order_by("model").values_list("model", flat=True).distinct()),
        "formats": list(among.order_by("source_format").values_list("source_format", flat=True).distinct()),
        "tags": list(Tag.objects.filter(sessions__in=among).order_by("name").values_list("name", flat=True).distinct()),
    }


def session_count() -> int:
    return Session.objects.count()


@dataclass(frozen=True)
class SessionRow:
    """What the session list shows of a session beyond its own fields."""

    session: Session
    state: str  # scanned-loop, scanned-clean, scanning, not scanned, live, live · looping, live · stalled, stopped
    state_badge: str  # the badge's CSS modifier (UI_CONTRACT.md)
    verdicts: list[SessionVerdict]  # the session's own scan profile first
    labels: list[str]  # label kinds on the session or its detections, in LabelKind order


_LIVE_STATES = {
    Session.State.LIVE: ("live", "badge-live"),
    Session.State.LOOPING: ("live · looping", "badge-loop"),
    Session.State.STALLED: ("live · stalled", "badge-warn"),
    Session.State.STOPPED: ("stopped", "badge-warn"),
}


def session_row(session: Session, profile: str = "") -> SessionRow:
    """A row of `session_list` (its verdicts prefetched, its label kinds
    annotated) as the list shows it; `profile` as the list's filter gives it.
    The scan state reads that profile's verdict, else the session's own
    profile's, else any: a loop under any of them makes it scanned-loop."""
    verdicts = list(session.verdicts.all())
    chosen = profile or session.profile
    verdicts.sort(key=lambda v: v.profile != chosen)
    ruling = [v for v in verdicts if v.profile == chosen] or (verdicts if not profile else [])
    if session.state in _LIVE_STATES:
        state, badge = _LIVE_STATES[session.state]
    elif any(v.looped for v in ruling):
        state, badge = "scanned-loop", "badge-loop"
    elif ruling:
        state, badge = "scanned-clean", "badge-clean"
    elif getattr(session, "scanning", False):
        state, badge = "scanning", "badge-muted"
    else:
        state, badge = "not scanned", "badge-muted"
    labels = [kind for kind in LabelKind.values if getattr(session, f"labelled_{kind}", False)]
    return SessionRow(session=session, state=state, state_badge=badge, verdicts=verdicts, labels=labels)
