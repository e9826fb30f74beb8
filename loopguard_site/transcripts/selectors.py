from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from detector.config import Config, builtin_config
from detector.importers import PARSERS
from loopguard_site.accounts.access import in_visible_projects, object_for
from loopguard_site.accounts.models import Role

from .models import Event, Session, Tag

# sort key (as `?sort=` takes it; prefix `-` for descending) -> model field
SESSION_SORTS = {"created": "created", "title": "title", "model": "model", "events": "event_count"}
DEFAULT_SORT = "-created"
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


def sessions_matching(
    *,
    among: QuerySet[Session] | None = None,
    project: int | None = None,
    model: str = "",
    source_format: str = "",
    tag: str = "",
    state: str = "",
    q: str = "",
    created: date | None = None,
    live: bool = False,
    sort: str = DEFAULT_SORT,
) -> QuerySet[Session]:
    """Sessions of `among` (a user's: `sessions_visible_to`; None: every
    session) matching every filter of their own fields given (empty means
    any), sorted by `sort` (a `sort_choices()` value; ties broken by id, same
    direction). `q` searches title, model and tag names, case-insensitively;
    `created` is a UTC day; `live` keeps the open live sessions. Filters by
    scan results and labels belong to the layers above
    (`timeline.selectors.session_list` composes them)."""
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
    if q:
        tagged = Exists(Tag.objects.filter(sessions=OuterRef("pk"), name__icontains=q))
        sessions = sessions.filter(Q(title__icontains=q) | Q(model__icontains=q) | tagged)
    if created is not None:
        day = datetime.combine(created, time.min, tzinfo=timezone.get_fixed_timezone(0))
        sessions = sessions.filter(created__gte=day, created__lt=day + timedelta(days=1))
    if live:
        sessions = sessions.filter(state__in=OPEN_STATES)
    sign = "-" if sort.startswith("-") else ""
    field = SESSION_SORTS[sort.removeprefix("-")]
    return sessions.order_by(f"{sign}{field}", f"{sign}id")


def sessions_with_ids(ids: list[int]) -> QuerySet[Session]:
    """The sessions `ids` (in no order) with their uploader, project and tags:
    the rows of one page of the session list, read once its ids are known."""
    return Session.objects.filter(pk__in=ids).select_related("uploader", "project").prefetch_related("tags")


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


def _session_events(where: str, params: list, *, limit: int | None = None) -> list[tuple[int, list[int], list[dict]]]:
    """(session id, seqs, events) of each session with stored events
    matching `where` (SQL over the events table's columns; the first `limit`
    of them by session and seq), by session id, each session's in seq order.
    One raw query (the ORM's row building cost about as much as the query
    itself). On PostgreSQL a session is one row: its seqs as an array and its
    events' JSON texts joined by commas (`string_agg`), decoded as one JSON
    array by one `json.loads`; a row per event cost 0.25 against 0.14 s of
    CPU for 190,000 events (BENCHMARKS section 3). SQLite (before 3.44)
    cannot order inside an aggregate: a row per event, the texts joined and
    decoded the same way."""
    source = f"{connection.ops.quote_name(Event._meta.db_table)} WHERE {where}"
    if limit is not None:  # a keyset chunk, on the (session, seq) index
        source = f"(SELECT session_id, seq, data FROM {source} ORDER BY session_id, seq LIMIT %s) AS e"
        params = [*params, limit]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT session_id, array_agg(seq ORDER BY seq), string_agg(CAST(data AS TEXT), ',' ORDER BY seq)"
                f" FROM {source} GROUP BY session_id ORDER BY session_id",
                params,
            )
            return [(session_id, seqs, json.loads(f"[{texts}]")) for session_id, seqs, texts in cursor.fetchall()]
        cursor.execute(f"SELECT session_id, seq, CAST(data AS TEXT) FROM {source} ORDER BY session_id, seq", params)
        rows = cursor.fetchall()
    events = json.loads("[" + ",".join([text for _, _, text in rows]) + "]")
    sessions: list[tuple[int, list[int], list[dict]]] = []
    for (session_id, seq, _), event in zip(rows, events, strict=True):
        if not sessions or sessions[-1][0] != session_id:
            sessions.append((session_id, [], []))
        sessions[-1][1].append(seq)
        sessions[-1][2].append(event)
    return sessions


def session_event_stream(session_id: int, *, after: int = 0, last: int | None = None) -> Iterator[tuple[int, dict]]:
    """Every event of the session as (seq, event), in seq order: the whole
    session for a replay (or those after seq `after`, up to `last`). Read in
    keyset chunks of EVENT_READ_CHUNK on the (session, seq) index
    (`_session_events`; a server-side cursor would cost more: PostgreSQL
    materializes it first outside a transaction)."""
    where, bound = "session_id = %s AND seq > %s", []
    if last is not None:
        where, bound = f"{where} AND seq <= %s", [last]
    while True:
        read = _session_events(where, [session_id, after, *bound], limit=EVENT_READ_CHUNK)
        seqs, events = (read[0][1], read[0][2]) if read else ([], [])
        yield from zip(seqs, events, strict=True)
        if len(seqs) < EVENT_READ_CHUNK:
            return
        after = seqs[-1]


def sessions_event_streams(sessions: Sequence[tuple[int, int]]) -> Iterator[tuple[int, Iterator[tuple[int, dict]]]]:
    """(session id, `session_event_stream` of it) for each session given as
    (id, event count), in order; consume each stream before asking for the
    next. Consecutive sessions of up to EVENT_READ_CHUNK events together are
    read in one query (a replay of many short sessions pays one round trip
    per chunk, not per session), a larger one as `session_event_stream`
    reads it."""
    index = 0
    while index < len(sessions):
        group, events = [], 0
        for session_id, count in sessions[index:]:
            if group and events + count > EVENT_READ_CHUNK:
                break
            group.append(session_id)
            events += count
        index += len(group)
        if events > EVENT_READ_CHUNK:  # one session, too large for one query
            yield group[0], session_event_stream(group[0])
            continue
        marks = ", ".join(["%s"] * len(group))
        read = {
            session_id: (seqs, decoded)
            for session_id, seqs, decoded in _session_events(f"session_id IN ({marks})", group)
        }
        for session_id in group:  # a session with no events has no row
            seqs, decoded = read.get(session_id, ([], []))
            yield session_id, zip(seqs, decoded, strict=True)


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


def upload_formats() -> list[tuple[str, str]]:
    """(format name, what it reads) for each import format, in
    event-format.md's order: the opening sentence of its importer's
    docstring, without the "The `name` format: " it starts with (and its
    backquotes: the page shows it as text)."""
    formats = []
    for name, module in PARSERS.items():
        opening = " ".join(module.__doc__.split("\n\n")[0].split())
        formats.append((name, opening.removeprefix(f"The `{name}` format: ").replace("`", "")))
    return formats
