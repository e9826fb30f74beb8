from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.db.models.lookups import Exact
from django.utils import timezone

from loopguard_site.accounts.access import object_for
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
    """Sessions of `among` (a user's: accounts.access.sessions_visible_to;
    None: every session) matching every filter given (empty means any),
    sorted by `sort` (a `sort_choices()` value; ties broken by id, same
    direction). `q` searches title, model and tag names, case-insensitively.

    `verdict` (one of `VERDICTS`), `detector` and `detection_type` read the
    results of `profile`, or by default each session's own scan profile
    (`Session.profile`; any profile for a session that has none). `label`
    (one of `LABEL_FILTERS`) reads reviewers' labels of the session and its
    detections; `created` is a UTC day; `live` keeps the open live sessions.
    Pages of it: `session_page`, which reads each row's verdicts and labels."""
    sessions = Session.objects.all() if among is None else among
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
    sign = "-" if sort.startswith("-") else ""
    field = SESSION_SORTS[sort.removeprefix("-")]
    return sessions.order_by(f"{sign}{field}", f"{sign}id")


@dataclass(frozen=True)
class Cursor:
    """A place in a sorted session list: the sort key's value and the id
    of the row a page ends at (`after=`) or starts at (`before=`)."""

    value: str | int | datetime
    id: int

    def token(self) -> str:
        """As links carry it: `value,id` (the value's own commas stay: the
        id is after the last one)."""
        value = self.value.isoformat() if isinstance(self.value, datetime) else self.value
        return f"{value},{self.id}"


END = "end"  # `before=end`: the last page


def cursor_from_token(token: str, sort: str) -> Cursor:
    """The cursor a link's `value,id` names for `sort`; ValueError if it is
    not one."""
    value, comma, pk = token.rpartition(",")
    if not comma or not pk.isdigit():
        raise ValueError("not value,id")
    field = SESSION_SORTS[sort.removeprefix("-")]
    if field == "created":
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            raise ValueError("a time without its UTC offset")
        return Cursor(moment, int(pk))
    if field == "event_count":
        if not value.isdigit():
            raise ValueError("an event count is a whole number")
        return Cursor(int(value), int(pk))
    return Cursor(value, int(pk))


# Sessions a list counts at most: counting every match of a filter reads
# them all (hundreds of ms at 100,000 sessions); beyond, the page says "more than 1,000".
COUNT_LIMIT = 1_000


@dataclass(frozen=True)
class SessionPage:
    """One page of a session list: its sessions (verdicts, tags and label
    kinds read for them alone), the cursors of the pages before and after it
    (None at either end) and how many sessions the whole list has, counted
    up to `COUNT_LIMIT` (`total_capped`: there are more)."""

    sessions: list[Session]
    previous: Cursor | None
    next: Cursor | None
    total: int
    total_capped: bool = False


def session_page(
    sessions: QuerySet[Session],
    *,
    sort: str = DEFAULT_SORT,
    size: int,
    after: Cursor | None = None,
    before: Cursor | str | None = None,
    total: bool = True,
) -> SessionPage:
    """The `size` sessions of `sessions` (a `session_list`, sorted by
    `sort`) that follow `after`, or precede `before` (`END`: the last page),
    or the first ones. Keyset pagination: the page's ids are read by walking
    the sort's (value, id) order from the cursor, so a deep page costs what
    the first one does (a short page back at the start is the first page);
    only then are that page's rows read with their verdicts, tags, label
    kinds and scan state. `total=False` leaves the count out (0)."""
    descending = sort.startswith("-")
    field = SESSION_SORTS[sort.removeprefix("-")]
    backwards = before is not None
    walk_descending = descending != backwards
    keys = sessions.values_list(field, "id")
    cursor = before if isinstance(before, Cursor) else after
    if cursor is not None:
        keys = keys.filter(_beyond(field, cursor, descending=walk_descending))
    sign = "-" if walk_descending else ""
    found = list(keys.order_by(f"{sign}{field}", f"{sign}id")[: size + 1])
    more, found = len(found) > size, found[:size]
    if backwards and not more and len(found) < size:  # back at the start: show the first page whole
        return session_page(sessions, sort=sort, size=size, total=total)
    if backwards:
        found.reverse()
    ends = (Cursor(*found[0]), Cursor(*found[-1])) if found else (None, None)
    earlier = more if backwards else cursor is not None
    later = isinstance(before, Cursor) if backwards else more
    counted = sessions.order_by()[: COUNT_LIMIT + 1].count() if total else 0
    return SessionPage(
        sessions=_page_rows([pk for _, pk in found]),
        previous=ends[0] if earlier else None,
        next=ends[1] if later else None,
        total=min(counted, COUNT_LIMIT),
        total_capped=counted > COUNT_LIMIT,
    )


def _beyond(field: str, cursor: Cursor, *, descending: bool) -> Q:
    """The rows after `cursor` in (field, id) order. The first, redundant
    bound lets the database start its index scan at the cursor."""
    way = "lt" if descending else "gt"
    past = Q(**{f"{field}__{way}": cursor.value}) | Q(**{field: cursor.value, f"id__{way}": cursor.id})
    return Q(**{f"{field}__{way}e": cursor.value}) & past


def _page_rows(ids: list[int]) -> list[Session]:
    """The sessions `ids`, in that order, each with its verdicts (by
    profile), tags, `scanning` (a replay of it is queued or running) and its
    label kinds (`labelled_*`)."""
    if not ids:
        return []
    rows = (
        Session.objects.filter(pk__in=ids)
        .select_related("uploader", "project")
        .prefetch_related("tags", Prefetch("verdicts", queryset=SessionVerdict.objects.order_by("profile")))
        .annotate(
            scanning=Exists(
                ReplayRun.objects.filter(session=OuterRef("pk"), state__in=[ReplayState.QUEUED, ReplayState.RUNNING])
            ),
            **{
                f"labelled_{kind}": Exists(Label.objects.filter(session=OuterRef("pk"), label=kind))
                for kind in LabelKind
            },
        )
    )
    by_id = {session.pk: session for session in rows}
    return [by_id[pk] for pk in ids]


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
    use by the sessions of `among`. Models and formats come from one pass
    over the sessions; each tag is kept at its first session found."""
    pairs = among.order_by().values_list("model", "source_format").distinct()
    models, formats = set(), set()
    for model, source_format in pairs:
        models.add(model)
        formats.add(source_format)
    tagged = Tag.sessions.through.objects.filter(tag=OuterRef("pk"), session__in=among)
    return {
        "models": sorted(models - {""}),
        "formats": sorted(formats),
        "tags": list(Tag.objects.filter(Exists(tagged)).order_by("name").values_list("name", flat=True)),
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
    """A session of a `session_page` (its verdicts prefetched, its label kinds
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
