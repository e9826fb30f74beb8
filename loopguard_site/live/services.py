"""Writes of live sessions: ingest, close, and the stalled sweep.

`live_ingest_batch` is the one ingest, for the producer sockets (whose
messages `ingest_worker` gathers from many sockets into one call) and for
HTTP batches (`live_ingest`, one message) alike: the messages of a batch
are stored in one transaction (group commit: one durable commit, and one
INSERT or COPY of their events, whatever their number), under row locks on
their sessions, so messages of one session are serialized whatever process
or socket they come through. Each message's seq must be the next one (a seq
already acknowledged is acknowledged again and stored no second time; a gap
is an error); its events are stored, fed to the session's Monitor, and
every detection is stored as a `replay.Detection` of the session's profile.
A message refused (a gap, a closed session, a quota used up) stores nothing
and leaves the others of its batch alone; so does one whose processing
raises anything else (a detector, the encoding): it is refused naming its
event, logged, and its session's Monitor, fed part of it, is rebuilt from
what is stored (`_Ingesting.spoil`). The caller forwards each stored
message's viewer texts once the batch is committed.

The Monitor stays in the memory of the process that stores the session's
messages (`_monitors`), stamped with the `LiveStream.revision` its last
write stored: a process uses its own only if the stored stamp still
matches, under the row lock; otherwise (another process wrote meanwhile,
or this one never had it) it unpickles the one stored in `LiveStream` and
feeds it the events stored after it, which is what the offline Monitor would
have seen. It is pickled every `monitor_save_interval` events (at most
MONITOR_SAVE_EVENTS) and whenever a detection fired or the session closed,
so that catching up stays short.

States (`Session.State`): `live` until a detector fires, then `looping`;
`stopped` once a stop-level detection fired (sticky: the producer must
abort); `stalled` when no event came for LOOPGUARD_LIVE_STALL_SECONDS (the
next event revives it); `closed` when the producer says `{"close": true}`
— a closed session takes no more events. A `finish` event does not close a
session: an agent session goes on with its next turn.
"""

from __future__ import annotations

import logging
import pickle
import secrets
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import DatabaseError, connection, connections, models, transaction
from django.utils import timezone

from detector import Checkpoint, Monitor
from detector import Detection as Found
from loopguard_site.accounts.quota import QUOTA_USED_UP, token_quota_take_many
from loopguard_site.replay.models import CheckpointEvaluation, Detection
from loopguard_site.replay.monitors import profile_monitor
from loopguard_site.replay.selectors import detection_to_dict, replay_config
from loopguard_site.replay.services import session_verdict_add
from loopguard_site.transcripts.event_rows import event_json, numbered_events_insert
from loopguard_site.transcripts.models import Event, Session

from .messages import ViewerMessage, events_text, send_to_producer, send_to_viewers, viewer_text
from .models import LiveStream
from .protocol import ProtocolError
from .selectors import OPEN_STATES, stalled_candidate_ids, tick_candidate_ids

log = logging.getLogger(__name__)

REPLAY_CHUNK = 2000  # events read per round trip when a Monitor catches up
MONITOR_SAVE_EVENTS = 500  # events between two pickles of a Monitor: at most this many to feed again
MONITORS_KEPT = 1000  # Monitors a process keeps in memory (the least recently used go first)


@dataclass(frozen=True)
class IngestRequest:
    """One producer message, already checked by `protocol.parse_message`.
    `token_key`: the API token it came with, whose daily quota counts it
    (None when it is counted elsewhere: `api_view` counts HTTP requests)."""

    session_id: int
    seq: int
    events: list[dict]
    close: bool = False
    token_key: str | None = None


@dataclass(frozen=True)
class IngestResult:
    """What the producer is told: the seq acknowledged, the detections the
    message fired (as `live_detection_dict` gives them) and the session's
    state; and what the session's viewers are to get."""

    ack: int
    state: str
    detections: list[dict] = field(default_factory=list)
    duplicate: bool = False
    viewer_texts: list[str] = field(default_factory=list)  # `viewer_text`s


def monitor_save_interval(session_id: int) -> int:
    """Events between two pickles of the session's Monitor: from half of
    MONITOR_SAVE_EVENTS to just under it, spread over sessions, so that sessions
    started together do not all pickle in the same second (500 of them
    did: 250 sessions' Monitors pickled and written by each process at
    once, a pause of 250-450 ms every 25 s)."""
    half = MONITOR_SAVE_EVENTS // 2
    return half + session_id * 2654435761 % (MONITOR_SAVE_EVENTS - half)  # Knuth's multiplicative hash


def live_detection_dict(detection: Detection) -> dict:
    """A stored detection as the live sockets send it: the API's fields plus
    `event_seq`, the event that fired it."""
    return {**detection_to_dict(detection), "event_seq": detection.event_seq}


class _MonitorCache:
    """This process's Monitors by session id, each with the revision it was
    current at. A Monitor is taken out while a transaction feeds it and put
    back only once that transaction committed: a rolled-back batch leaves
    none half-fed behind."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[int, tuple[int, Monitor]] = OrderedDict()
        self._lock = threading.Lock()  # the ingest worker, the sweeper and HTTP requests share it

    def take(self, session_id: int, revision: int) -> Monitor | None:
        with self._lock:
            entry = self._entries.pop(session_id, None)
        return entry[1] if entry is not None and entry[0] == revision else None

    def put(self, session_id: int, revision: int, monitor: Monitor) -> None:
        with self._lock:
            self._entries[session_id] = (revision, monitor)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


_monitors = _MonitorCache(MONITORS_KEPT)


def _locked_stream(session_id: int) -> tuple[Session, LiveStream]:
    """The session, locked until the transaction ends (every writer of a live
    session's events and state takes this lock first), and its LiveStream."""
    locked = _locked_streams({session_id})
    if session_id not in locked:
        raise ProtocolError(f"no session {session_id}", status=404)  # deleted while a producer streamed
    return locked[session_id]


_STREAM_FIELDS = ("session", "acked_seq", "monitor_events", "revision", "last_event_at")  # not the pickled Monitor


def _locked_streams(session_ids: set[int]) -> dict[int, tuple[Session, LiveStream]]:
    """`_locked_stream` for many sessions in one round trip (locked in id
    order, as every batch does: two batches never wait for each other in a
    circle); a session deleted meanwhile is missing. The pickled Monitor
    (tens of KB) is read only when this process's own is not current
    (`stream_monitor`). Written as SQL: Django's compiler spent more time
    building this query than the rest of a batch of a few messages spent
    storing them."""
    if not session_ids:  # every message of the batch refused (a quota used up)
        return {}
    quote = connection.ops.quote_name
    session_fields = Session._meta.concrete_fields
    stream_fields = [LiveStream._meta.get_field(name) for name in _STREAM_FIELDS]
    columns = [f"s.{quote(f.column)}" for f in session_fields] + [f"l.{quote(f.column)}" for f in stream_fields]
    key = f"s.{quote(Session._meta.pk.column)}"
    if connection.vendor == "postgresql":  # one text whatever the number of ids: psycopg parses it once
        chosen, ids = f"{key} = ANY(%s::bigint[])", [sorted(session_ids)]
    else:
        chosen, ids = f"{key} IN ({', '.join(['%s'] * len(session_ids))})", sorted(session_ids)
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(Session._meta.db_table)} s"
        f" LEFT JOIN {quote(LiveStream._meta.db_table)} l ON l.{quote(stream_fields[0].column)} = {key}"
        f" WHERE {chosen} ORDER BY {key}" + (" FOR UPDATE OF s" if connection.features.has_select_for_update_of else "")
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, ids)
        rows = cursor.fetchall()
    session_values, stream_values = _row_converter(session_fields), _row_converter(stream_fields)
    locked, missing = {}, []
    for row in rows:
        session = Session.from_db(connection.alias, None, session_values(row[: len(session_fields)]))
        if row[len(session_fields)] is None:  # no LiveStream yet
            stream = LiveStream(session=session)
            missing.append(stream)
        else:
            stream = LiveStream.from_db(
                connection.alias, [f.attname for f in stream_fields], stream_values(row[len(session_fields) :])
            )
        locked[session.pk] = (session, stream)
    LiveStream.objects.bulk_create(missing)
    return locked


def _row_converter(fields: Sequence[models.Field]) -> Callable[[Sequence], list]:
    """Turns database values of `fields` into Python values, as a queryset does."""
    converters = [
        (index, connection.ops.get_db_converters(column) + field.get_db_converters(connection), column)
        for index, field in enumerate(fields)
        for column in [field.get_col(field.model._meta.db_table)]
    ]
    converters = [(index, functions, column) for index, functions, column in converters if functions]

    def convert(values: Sequence) -> list:
        values = list(values)
        for index, functions, column in converters:
            for function in functions:
                values[index] = function(values[index], column, connection)
        return values

    return convert


def _locked_or_gone(session_id: int) -> tuple[Session, LiveStream] | None:
    """For the sweeps: a session deleted since it was listed is skipped."""
    try:
        return _locked_stream(session_id)
    except ProtocolError:
        return None


def _check_open(session: Session) -> None:
    if session.state not in OPEN_STATES:
        raise ProtocolError(f"session {session.pk} is {session.state}: it takes no events", status=409)


def _new_monitor(session: Session) -> Monitor:
    """A Monitor of the session's profile. Before its first event a session
    takes the profile its model selects among its project's stored profiles
    and the built-in ones (it was created with the built-in choice: the
    transcripts app does not read stored profiles)."""
    config = replay_config(session.project_id)
    if not session.event_count:
        chosen = config.select(model=session.model).name
        if chosen != session.profile:
            Session.objects.filter(pk=session.pk).update(profile=chosen)
            session.profile = chosen
    return profile_monitor(config.select(session.profile or "default"), model=session.model)


def stream_monitor(session: Session, stream: LiveStream) -> Monitor:
    """The session's Monitor as the stored events and ticks left it (under
    the session's lock): this process's own if no other wrote since, else
    the pickled one fed the events stored after it (a new one fed them all
    when none is stored or it no longer loads: the detector code changed)."""
    if (monitor := _monitors.take(session.pk, stream.revision)) is not None:
        return monitor
    monitor, fed = None, 0
    if stream.monitor is not None:
        try:
            monitor, fed = pickle.loads(bytes(stream.monitor)), stream.monitor_events  # noqa: S301 - ours only
        except Exception:  # noqa: BLE001 - any unpickling failure means "rebuild"
            pass
    if monitor is None:
        monitor, fed = _new_monitor(session), 0
    if session.event_count > fed:
        events = Event.objects.filter(session=session, seq__gt=fed).order_by("seq").values_list("data", flat=True)
        for data in events.iterator(chunk_size=REPLAY_CHUNK):
            monitor.feed(data)
        monitor.take_checkpoints()  # stored when they were first recorded
    return monitor


def _stream_written(session: Session, stream: LiveStream, monitor: Monitor | None, *, pickle_it: bool) -> None:
    """Stamp the stream with a new revision (and pickle the Monitor if asked);
    the caller saves the stream. The Monitor becomes this process's once the
    transaction commits (a closed session's is dropped: it takes no events).
    With no Monitor (a spoiled one), the next writer rebuilds it."""
    stream.revision = secrets.randbits(63)
    if monitor is None:
        return
    if pickle_it:
        stream.monitor = pickle.dumps(monitor, protocol=pickle.HIGHEST_PROTOCOL)
        stream.monitor_events = session.event_count
    if session.state != Session.State.CLOSED:
        transaction.on_commit(partial(_monitors.put, session.pk, stream.revision, monitor))


def _state_after(session: Session, monitor: Monitor, fired: bool) -> str:
    if monitor.stopped:
        return Session.State.STOPPED
    if fired or session.state == Session.State.LOOPING:
        return Session.State.LOOPING
    if (
        session.state == Session.State.STALLED
        and Detection.objects.filter(session=session, profile=session.profile).exists()
    ):
        return Session.State.LOOPING  # a stalled session that had looped revives as looping
    return Session.State.LIVE


def _checkpoint_fields(checkpoint: Checkpoint) -> dict:
    fields = asdict(checkpoint)
    fields["check_name"] = fields.pop("check")  # renamed in the model: Model.check() is Django's
    return fields


def _store_found(
    session: Session, found: list[tuple[int, Found]], checkpoints: list[tuple[int, Checkpoint]]
) -> list[dict]:
    """Store detections and checkpoint evaluations (each with the seq of the
    event that fired it) as the session's profile's; the detections as sent."""
    rows = Detection.objects.bulk_create(
        [Detection(session=session, profile=session.profile, event_seq=number, **asdict(d)) for number, d in found]
    )
    if rows:
        session_verdict_add(session=session, profile=session.profile, rows=rows)
    if checkpoints:
        CheckpointEvaluation.objects.bulk_create(
            CheckpointEvaluation(session=session, profile=session.profile, event_seq=number, **_checkpoint_fields(c))
            for number, c in checkpoints
        )
    return [live_detection_dict(row) for row in rows]


@dataclass
class _Ingesting:
    """A session while a batch stores its messages: what is written at the end."""

    session: Session
    stream: LiveStream
    monitor: Monitor | None = None  # taken at its first message
    pickle_it: bool = False
    written: bool = False  # a message of it was stored

    def monitor_now(self) -> Monitor:
        if self.monitor is None:
            self.monitor = stream_monitor(self.session, self.stream)
        return self.monitor

    def spoil(self, new_events: list) -> None:
        """A message failed half-way through feeding the Monitor: store the
        batch's events so far (in its transaction) and drop the Monitor, so
        that the next message rebuilds it from what is stored."""
        numbered_events_insert(new_events)
        new_events.clear()
        self.monitor = None


class _MessageFailed(Exception):
    """Anything but a `ProtocolError` raised by one message, with the field
    it came from."""

    def __init__(self, field: str, cause: Exception):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.field = field


def _within_quota(requests: Sequence[IngestRequest], now: datetime) -> dict[int, ProtocolError]:
    """The requests (by index) their token's daily quota refuses: per token,
    the last ones of the batch."""
    by_token: dict[str, list[int]] = defaultdict(list)
    for index, request in enumerate(requests):
        if request.token_key is not None:
            by_token[request.token_key].append(index)
    refused = {}
    for token_key, indexes in by_token.items():
        allowed, retry_after = token_quota_take_many(token_key=token_key, calls=len(indexes), now=now)
        for index in indexes[allowed:]:
            refused[index] = ProtocolError(
                f"{QUOTA_USED_UP}; retry in {retry_after} s",
                status=429,
                retry_after=retry_after,
            )
    return refused


def _ingest_one(ingesting: _Ingesting, request: IngestRequest, new_events: list, now: datetime) -> IngestResult:
    session, stream = ingesting.session, ingesting.stream
    seq, events = request.seq, request.events
    if seq <= stream.acked_seq:
        return IngestResult(ack=seq, state=session.state, duplicate=True)
    _check_open(session)
    if seq != stream.acked_seq + 1:
        raise ProtocolError(f"seq {seq} leaves a gap: the next message is {stream.acked_seq + 1}", field="seq")
    if session.event_count + len(events) > settings.LOOPGUARD_MAX_EVENTS:
        raise ProtocolError(
            f"{len(events)} more events would make {session.event_count + len(events)}, over the limit of "
            f"{settings.LOOPGUARD_MAX_EVENTS} events per session (LOOPGUARD_MAX_EVENTS)",
            field="events",
            status=413,
        )
    monitor = ingesting.monitor_now()
    first = session.event_count + 1
    found: list[tuple[int, Found]] = []
    checkpoints: list[tuple[int, Checkpoint]] = []
    texts = []
    for offset, event in enumerate(events):
        try:
            found.extend((first + offset, detection) for detection in monitor.feed(event))
            checkpoints.extend((first + offset, checkpoint) for checkpoint in monitor.take_checkpoints())
            texts.append(event_json(event))
        except Exception as exc:  # noqa: BLE001 - whatever it was, it is this message's alone
            raise _MessageFailed(f"events[{offset}]", exc) from exc
    detections = []
    if found or checkpoints:
        try:
            with transaction.atomic():  # a savepoint: a refused row fails this message, not the batch
                detections = _store_found(session, found, checkpoints)
        except DatabaseError as exc:
            raise _MessageFailed("events", exc) from exc
    new_events.extend(
        (session.pk, number, event["type"], text)
        for number, (event, text) in enumerate(zip(events, texts, strict=True), start=first)
    )
    old_state = session.state
    session.state = Session.State.CLOSED if request.close else _state_after(session, monitor, bool(found))
    session.event_count += len(events)
    stream.acked_seq, stream.last_event_at = seq, now
    ingesting.written = True
    ingesting.pickle_it |= (
        bool(found) or request.close or session.event_count >= stream.monitor_events + monitor_save_interval(session.pk)
    )
    viewer_texts = [events_text(first, events, texts)]
    viewer_texts += [viewer_text({"detection": detection}) for detection in detections]
    if session.state != old_state:
        viewer_texts.append(viewer_text({"state": session.state}))
    return IngestResult(ack=seq, state=session.state, detections=detections, viewer_texts=viewer_texts)


_RowsUpdate = tuple[type[models.Model], list[str], list[models.Model]]


def _update_rows(*updates: _RowsUpdate) -> None:
    """Save fields of many rows, each its own values: one statement per
    (model, fields, rows), `UPDATE ... FROM (VALUES ...)` (Django's
    `bulk_update` builds a CASE per field and row, milliseconds of Python a
    row). On PostgreSQL all of them go in one round trip (Django's cursor
    binds parameters client-side, so one execute takes several statements)."""
    statements = [_update_rows_statement(*update) for update in updates]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("; ".join(sql for sql, _ in statements), [v for _, values in statements for v in values])
        else:
            for sql, values in statements:
                cursor.execute(sql, values)


def _update_rows_statement(model: type[models.Model], fields: list[str], objects: list[models.Model]) -> tuple:
    """On PostgreSQL the rows come as one array per column (`unnest`): the
    statement's text is the same whatever the number of rows, so psycopg
    parses it once per process, where a `VALUES` list of a placeholder per
    value was parsed again for every batch (a third of a batch's time)."""
    quote = connection.ops.quote_name
    table, key = quote(model._meta.db_table), quote(model._meta.pk.column)
    columns = [model._meta.get_field(name) for name in fields]
    sets = ", ".join(f"{quote(column.column)} = v.column{n}" for n, column in enumerate(columns, start=2))
    database = connections[connection.alias]  # not the proxy: it looks the connection up at every attribute
    rows = [
        [obj.pk, *(column.get_db_prep_save(getattr(obj, column.attname), database) for column in columns)]
        for obj in objects
    ]
    if connection.vendor == "postgresql":
        names = ", ".join(f"column{n}" for n in range(1, len(columns) + 2))
        types = [model._meta.pk.db_type(connection), *(column.db_type(connection) for column in columns)]
        arrays = ", ".join(f"%s::{db_type}[]" for db_type in types)
        source, values = f"unnest({arrays}) AS v({names})", [list(column) for column in zip(*rows, strict=True)]
    else:
        row = "(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"
        source, values = f"(VALUES {', '.join([row] * len(objects))}) AS v", [v for row in rows for v in row]
    return f"UPDATE {table} SET {sets} FROM {source} WHERE {table}.{key} = v.column1", values


def live_ingest_batch(requests: Sequence[IngestRequest]) -> list[IngestResult | ProtocolError]:
    """Store producer messages (of one session or many, in order) in one
    transaction, detect, and answer for each what to acknowledge — or the
    `ProtocolError` that refused it (a gap in the seq, a session that takes
    no events or is gone, a quota used up), in which case nothing of it is
    stored. Returns once the batch is committed; the caller forwards the
    results' `viewer_texts`."""
    now = timezone.now()
    outcomes: dict[int, IngestResult | ProtocolError] = _within_quota(requests, now)
    admitted = [index for index in range(len(requests)) if index not in outcomes]
    with transaction.atomic():
        locked = _locked_streams({requests[index].session_id for index in admitted})
        ingesting = {session_id: _Ingesting(session, stream) for session_id, (session, stream) in locked.items()}
        new_events: list[tuple[int, int, str, str]] = []
        for index in admitted:
            request = requests[index]
            try:
                if request.session_id not in ingesting:
                    raise ProtocolError(f"no session {request.session_id}", status=404)  # deleted while streaming
                outcomes[index] = _ingest_one(ingesting[request.session_id], request, new_events, now)
            except ProtocolError as exc:
                outcomes[index] = exc
            except _MessageFailed as exc:
                log.error(
                    "live message seq %d of session %d failed at %s",
                    request.seq, request.session_id, exc.field, exc_info=exc.__cause__,
                )  # fmt: skip
                ingesting[request.session_id].spoil(new_events)
                outcomes[index] = ProtocolError(
                    f"seq {request.seq}: {exc.field} could not be processed ({exc}); nothing of the message was stored",
                    field=exc.field,
                    status=422,
                )
        written = [one for one in ingesting.values() if one.written]
        if written:
            numbered_events_insert(new_events)
            for one in written:
                _stream_written(one.session, one.stream, one.monitor, pickle_it=one.pickle_it)
            updates: list[_RowsUpdate] = [
                (Session, ["event_count", "state"], [one.session for one in written]),
                (LiveStream, ["acked_seq", "last_event_at", "revision"], [one.stream for one in written]),
            ]
            if pickled := [one.stream for one in written if one.pickle_it and one.monitor is not None]:
                updates.append((LiveStream, ["monitor", "monitor_events"], pickled))
            _update_rows(*updates)
    return [outcomes[index] for index in range(len(requests))]


def live_ingest(*, session_id: int, seq: int, events: list[dict], close: bool = False) -> IngestResult:
    """Store one producer message (an HTTP batch, a proxied stream) and
    forward it to the session's viewers; `ProtocolError` if it is refused."""
    [outcome] = live_ingest_batch([IngestRequest(session_id=session_id, seq=seq, events=events, close=close)])
    if isinstance(outcome, ProtocolError):
        raise outcome
    if outcome.viewer_texts:
        send_to_viewers(session_id, outcome.viewer_texts)
    return outcome


def live_session_close(*, session_id: int) -> IngestResult:
    """Close the session (idempotent): it takes no more events. Only an open
    (live, looping, stopped or stalled) session can be closed."""
    with transaction.atomic():
        session, stream = _locked_stream(session_id)
        if session.state == Session.State.CLOSED:
            return IngestResult(ack=stream.acked_seq, state=session.state)
        _check_open(session)
        Session.objects.filter(pk=session.pk).update(state=Session.State.CLOSED)
        transaction.on_commit(lambda: send_to_viewers(session_id, [viewer_text({"state": Session.State.CLOSED})]))
    return IngestResult(ack=stream.acked_seq, state=Session.State.CLOSED)


def live_sessions_mark_stalled(*, now: datetime) -> list[int]:
    """Mark `stalled` every live or looping session whose last event (or,
    with none, its creation) is LOOPGUARD_LIVE_STALL_SECONDS or more before
    `now`; their ids, ascending. Each is re-checked under its lock, so an
    event stored meanwhile keeps its session live."""
    cutoff = now - timedelta(seconds=settings.LOOPGUARD_LIVE_STALL_SECONDS)
    marked = []
    for session_id in stalled_candidate_ids(cutoff):
        with transaction.atomic():
            if (locked := _locked_or_gone(session_id)) is None:
                continue
            session, stream = locked
            last = stream.last_event_at or session.created
            if session.state in (Session.State.LIVE, Session.State.LOOPING) and last <= cutoff:
                Session.objects.filter(pk=session_id).update(state=Session.State.STALLED)
                transaction.on_commit(
                    lambda session_id=session_id: send_to_viewers(
                        session_id, [viewer_text({"state": Session.State.STALLED})]
                    )
                )
                marked.append(session_id)
    return marked


def live_sessions_tick(*, now: datetime) -> list[int]:
    """`Monitor.tick` for the open sessions whose events carry `t`: time
    goes on while nothing arrives, so the detectors' silence rules (the
    health detector's `stream_stalled` and `stream_idle`, seed 003) fire for
    a stream that went quiet. The session's `t` now is its last event's `t`
    plus the wall-clock time since that event was stored. Detections are
    stored and sent to viewers and to the producer socket; a stop-level one
    makes the session `stopped`. The ids of sessions where one fired."""
    fired = []
    for session_id in tick_candidate_ids():
        with transaction.atomic():
            if (locked := _locked_or_gone(session_id)) is None:
                continue
            session, stream = locked
            if session.state not in OPEN_STATES or stream.last_event_at is None:
                continue
            monitor = stream_monitor(session, stream)
            found = []
            if monitor.ctx.t is not None:
                found = [
                    (session.event_count, d)
                    for d in monitor.tick(monitor.ctx.t + (now - stream.last_event_at).total_seconds())
                ]
            if not found:  # a tick that fires nothing changes nothing: the Monitor stays current
                _monitors.put(session_id, stream.revision, monitor)
                continue
            detections = _store_found(session, found, [])
            _stream_written(session, stream, monitor, pickle_it=True)
            stream.save(update_fields=["monitor", "monitor_events", "revision"])
            payloads: list[ViewerMessage] = [{"detection": detection} for detection in detections]
            if monitor.stopped and session.state != Session.State.STOPPED:
                Session.objects.filter(pk=session_id).update(state=Session.State.STOPPED)
                payloads.append({"state": Session.State.STOPPED})
            transaction.on_commit(partial(_send_tick, session_id, payloads, detections))
            fired.append(session_id)
    return fired


def _send_tick(session_id: int, payloads: list[ViewerMessage], detections: list[dict]) -> None:
    send_to_viewers(session_id, [viewer_text(payload) for payload in payloads])
    send_to_producer(session_id, detections)
