"""Writes of live sessions: ingest, close, the stalled sweep, and a stored
session streamed into a live one (`live_session_stream_stored`).

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

The Monitor comes from this process's cache (`monitor_cache`); it is
pickled every `monitor_save_interval` events (at most MONITOR_SAVE_EVENTS)
and whenever a detection fired or the session closed, so that catching up
stays short. The session's state follows the table of `states`; the rows
are locked, and saved in bulk, with the statements of `transcripts.batch_sql`.
"""

from __future__ import annotations

import logging
import pickle
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from itertools import islice

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from detector import TEXT_CHANNELS, Checkpoint, Config, Monitor
from detector import Detection as Found
from loopguard_site.accounts.quota import QUOTA_USED_UP, token_quota_take_many
from loopguard_site.errors import FieldError
from loopguard_site.replay.models import Detection
from loopguard_site.replay.selectors import detection_to_dict
from loopguard_site.replay.services import found_store
from loopguard_site.transcripts.batch_sql import RowsUpdate, rows_locked_with, rows_update
from loopguard_site.transcripts.event_rows import event_json, numbered_events_insert, numbered_events_statements
from loopguard_site.transcripts.layout_rows import session_layouts_update
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_event_stream
from loopguard_site.transcripts.services import session_create_live

from .messages import ViewerMessage, events_text, send_to_producer, send_to_viewers, viewer_text
from .models import LiveStream
from .monitor_cache import monitors, read_stored_monitors, stream_monitor
from .selectors import stalled_candidate_ids, tick_candidate_ids
from .states import OPEN_STATES, Trigger, takes, transition

log = logging.getLogger(__name__)

MONITOR_SAVE_EVENTS = 500  # events between two pickles of a Monitor: at most this many to feed again
LAYOUT_EXTEND_EVENTS = 1000  # a long live session's stored layout is extended once in this many events


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
    texts: list[str] | None = None  # each event's JSON text as stored, when the caller has it (`parse_message`'s)
    ack_now: bool = False  # protocol 3: its ack is not held (`answers.producer_answer`)


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
    return half + _session_spread(session_id, MONITOR_SAVE_EVENTS - half)


def layout_due(session_id: int, before: int, after: int) -> bool:
    """Whether a batch that took a live session from `before` to `after`
    events extends its stored layout (`session_layouts_update`, which passes
    over sessions too short to keep one): once in LAYOUT_EXTEND_EVENTS
    events, at a count of its own, so that sessions started together do not
    all extend in the same batch. An extension costs the ingest thread 2-2.5
    ms, a session at a time, whatever its number of events (its statements):
    extended with every batch, each message of a session past
    LOOPGUARD_LAYOUT_MIN_EVENTS cost 2.2-2.4 ms instead of 0.27 (6-event
    messages). A page extends a layout that is behind before reading it
    (`layout_rows.session_layout`)."""
    offset = _session_spread(session_id, LAYOUT_EXTEND_EVENTS)
    return (before + offset) // LAYOUT_EXTEND_EVENTS != (after + offset) // LAYOUT_EXTEND_EVENTS


def _session_spread(session_id: int, span: int) -> int:
    """A number in [0, span) of the session's own, spread over consecutive ids."""
    return session_id * 2654435761 % span  # Knuth's multiplicative hash


def live_detection_dict(detection: Detection) -> dict:
    """A stored detection as the live sockets send it: the API's fields plus
    `event_seq`, the event that fired it."""
    return {**detection_to_dict(detection), "event_seq": detection.event_seq}


def _locked_stream(session_id: int) -> tuple[Session, LiveStream]:
    """The session, locked until the transaction ends (every writer of a live
    session's events and state takes this lock first), and its LiveStream."""
    locked = _locked_streams({session_id})
    if session_id not in locked:
        raise FieldError(f"no session {session_id}", status=404)  # deleted while a producer streamed
    return locked[session_id]


_STREAM_FIELDS = ("session", "acked_seq", "monitor_events", "revision", "last_event_at")  # not the pickled Monitor
# What the writers of a live session read of it: not its title nor its creation time (a time stamp is parsed
# in Python, a few µs a row; the stall sweep reads the creation time of a session with no event yet).
_SESSION_FIELDS = ("state", "event_count", "profile", "project", "model")
# the ingest sets the time of the last event, it never reads it
_INGEST_STREAM_FIELDS = tuple(name for name in _STREAM_FIELDS if name != "last_event_at")


def _locked_streams(
    session_ids: set[int], stream_fields: Sequence[str] = _STREAM_FIELDS
) -> dict[int, tuple[Session, LiveStream]]:
    """`_locked_stream` for many sessions in one round trip (in id order),
    with `stream_fields` of their LiveStreams (the others when first used);
    a session deleted meanwhile is missing. The pickled Monitor (tens of KB)
    is read only when this process's own is not current
    (`read_stored_monitors`), or with a stream created here."""
    locked, missing = {}, []
    for session, stream in rows_locked_with(Session, session_ids, LiveStream, stream_fields, own=_SESSION_FIELDS):
        if stream is None:  # no LiveStream yet
            stream = LiveStream(session=session)
            missing.append(stream)
        locked[session.pk] = (session, stream)
    if missing:
        # After waiting for a session's lock PostgreSQL re-checks only that
        # row: a stream another transaction created meanwhile still reads as
        # missing. Insert what is not there, then read every one of them
        # (whole: a new stream's Monitor is none, one created meanwhile holds one).
        LiveStream.objects.bulk_create(missing, ignore_conflicts=True)
        for stream in LiveStream.objects.filter(session__in=[stream.session_id for stream in missing]):
            stream.session = locked[stream.session_id][0]
            locked[stream.session_id] = (stream.session, stream)
    return locked


def _locked_or_gone(session_id: int) -> tuple[Session, LiveStream] | None:
    """For the sweeps: a session deleted since it was listed is skipped."""
    try:
        return _locked_stream(session_id)
    except FieldError:
        return None


def _streams_written(written: Iterable[tuple[Session, LiveStream, Monitor | None, bool]]) -> None:
    """Stamp each (session, stream, Monitor, pickle it) stream with a new
    revision (and pickle its Monitor if asked); the caller saves the
    streams. The Monitors become this process's once the transaction
    commits, with one hook for them all (a hook a session took 3-4 % of the
    ingest thread at 210 one-event producers); a closed session's is
    dropped (it takes no events).
    With no Monitor (a spoiled one), the next writer rebuilds it."""
    kept = []
    for session, stream, monitor, pickle_it in written:
        stream.revision = secrets.randbits(63)
        if monitor is None:
            continue
        if pickle_it:
            stream.monitor = pickle.dumps(monitor, protocol=pickle.HIGHEST_PROTOCOL)
            stream.monitor_events = session.event_count
        if session.state != Session.State.CLOSED:
            kept.append((session.pk, stream.revision, monitor))
    if kept:
        transaction.on_commit(partial(monitors.put_many, kept))


def _trigger(session: Session, monitor: Monitor, fired: bool) -> Trigger:
    """What a message's events were to the session's state."""
    if monitor.stopped:
        return Trigger.STOPPED
    if fired or (
        session.state == Session.State.STALLED
        and Detection.objects.filter(session=session, profile=session.profile).exists()
    ):
        return Trigger.DETECTED  # a stalled session that had looped revives as looping
    return Trigger.EVENTS


def _store_found(
    session: Session, found: list[tuple[int, Found]], checkpoints: list[tuple[int, Checkpoint]]
) -> list[dict]:
    """Store what the detectors found as the session's profile's; the detections as sent."""
    rows = found_store(session=session, profile=session.profile, run=None, found=found, checkpoints=checkpoints)
    return [live_detection_dict(row) for row in rows]


@dataclass
class _Ingesting:
    """A session while a batch stores its messages: what is written at the end."""

    session: Session
    stream: LiveStream
    configs: dict[int | None, Config]  # the batch's projects' profiles, read once a project (`stream_monitor`)
    monitor: Monitor | None = None  # taken at its first message
    events_before: int = field(init=False)  # the session's events before the batch
    pickle_it: bool = False
    written: bool = False  # a message of it was stored

    def __post_init__(self) -> None:
        self.events_before = self.session.event_count

    def monitor_now(self) -> Monitor:
        if self.monitor is None:
            self.monitor = stream_monitor(self.session, self.stream, self.configs)
        return self.monitor

    def spoil(self, new_events: list) -> None:
        """A message failed half-way through feeding the Monitor: store the
        batch's events so far (in its transaction) and drop the Monitor, so
        that the next message rebuilds it from what is stored."""
        numbered_events_insert(new_events)
        new_events.clear()
        self.monitor = None


class _MessageFailed(Exception):
    """Anything but a `FieldError` raised by one message, with the field
    it came from."""

    def __init__(self, field: str, cause: Exception):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.field = field


def _within_quota(requests: Sequence[IngestRequest], now: datetime) -> dict[int, FieldError]:
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
            refused[index] = FieldError(
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
    transition(session.pk, session.state, Trigger.EVENTS)  # refuses a session that takes no events
    if seq != stream.acked_seq + 1:
        raise FieldError(f"seq {seq} leaves a gap: the next message is {stream.acked_seq + 1}", field="seq")
    if session.event_count + len(events) > settings.LOOPGUARD_MAX_EVENTS:
        raise FieldError(
            f"{len(events)} more events would make {session.event_count + len(events)}, over the limit of "
            f"{settings.LOOPGUARD_MAX_EVENTS} events per session (LOOPGUARD_MAX_EVENTS)",
            field="events",
            status=413,
        )
    monitor = ingesting.monitor_now()
    first = session.event_count + 1
    found: list[tuple[int, Found]] = []
    checkpoints: list[tuple[int, Checkpoint]] = []
    texts = [] if request.texts is None else request.texts
    # (The Monitor's `feed` and context looked up once, and a list built only
    # for an event that fired: most events cost the Monitor less than a
    # microsecond, as in the replay's loop.)
    feed, ctx = monitor.feed, monitor.ctx
    for offset, event in enumerate(events):
        try:
            if hits := feed(event):
                found.extend((first + offset, detection) for detection in hits)
            if ctx.checkpoints:
                checkpoints.extend((first + offset, checkpoint) for checkpoint in monitor.take_checkpoints())
            if request.texts is None:
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
    session.state = transition(session.pk, session.state, _trigger(session, monitor, bool(found)))
    if request.close:
        session.state = transition(session.pk, session.state, Trigger.CLOSE)
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


def live_ingest_batch(requests: Sequence[IngestRequest]) -> list[IngestResult | FieldError]:
    """Store producer messages (of one session or many, in order) in one
    transaction, detect, and answer for each what to acknowledge — or the
    `FieldError` that refused it (a gap in the seq, a session that takes
    no events or is gone, a quota used up), in which case nothing of it is
    stored. Returns once the batch is committed; the caller forwards the
    results' `viewer_texts`."""
    now = timezone.now()
    outcomes: dict[int, IngestResult | FieldError] = _within_quota(requests, now)
    admitted = [index for index in range(len(requests)) if index not in outcomes]
    with transaction.atomic():
        locked = _locked_streams({requests[index].session_id for index in admitted}, _INGEST_STREAM_FIELDS)
        read_stored_monitors(stream for _, stream in locked.values())
        configs: dict[int | None, Config] = {}
        ingesting = {
            session_id: _Ingesting(session, stream, configs) for session_id, (session, stream) in locked.items()
        }
        new_events: list[tuple[int, int, str, str]] = []
        for index in admitted:
            request = requests[index]
            try:
                if request.session_id not in ingesting:
                    raise FieldError(f"no session {request.session_id}", status=404)  # deleted while streaming
                outcomes[index] = _ingest_one(ingesting[request.session_id], request, new_events, now)
            except FieldError as exc:
                outcomes[index] = exc
            except _MessageFailed as exc:
                log.error(
                    "live message seq %d of session %d failed at %s",
                    request.seq, request.session_id, exc.field, exc_info=exc.__cause__,
                )  # fmt: skip
                ingesting[request.session_id].spoil(new_events)
                outcomes[index] = FieldError(
                    f"seq {request.seq}: {exc.field} could not be processed ({exc}); nothing of the message was stored",
                    field=exc.field,
                    status=422,
                )
        written = [one for one in ingesting.values() if one.written]
        if written:
            _streams_written((one.session, one.stream, one.monitor, one.pickle_it) for one in written)
            updates: list[RowsUpdate] = [
                (Session, ["event_count", "state"], [one.session for one in written]),
                (LiveStream, ["acked_seq", "last_event_at", "revision"], [one.stream for one in written]),
            ]
            if pickled := [one.stream for one in written if one.pickle_it and one.monitor is not None]:
                updates.append((LiveStream, ["monitor", "monitor_events"], pickled))
            # the events in the same round trip: each one the ingest thread waits for costs it CPU
            rows_update(*updates, before=numbered_events_statements(new_events))
            session_layouts_update(
                one.session for one in written if layout_due(one.session.pk, one.events_before, one.session.event_count)
            )
    return [outcomes[index] for index in range(len(requests))]


def live_ingest(
    *, session_id: int, seq: int, events: list[dict], close: bool = False, texts: list[str] | None = None
) -> IngestResult:
    """Store one producer message (an HTTP batch, a proxied stream) and
    forward it to the session's viewers; `FieldError` if it is refused.
    `texts`: as `IngestRequest`'s."""
    [outcome] = live_ingest_batch(
        [IngestRequest(session_id=session_id, seq=seq, events=events, close=close, texts=texts)]
    )
    if isinstance(outcome, FieldError):
        raise outcome
    if outcome.viewer_texts:
        send_to_viewers(session_id, outcome.viewer_texts)
    return outcome


STREAMED_CHUNK_CHARS = 4  # about a token: text reaches the live session as a model streams it
STREAMED_CHUNKS_PER_SECOND = 40.0  # a brisk model's pace, slow enough to watch
# After this long at that pace the rest goes in batches as fast as the
# ingest takes them, so a long session does not hold a worker for hours.
STREAMED_PACED_SECONDS = 120
STREAMED_BATCH_EVENTS = 256  # the client library's largest batch (LiveSession's max_batch)


def streamed_events(events: Iterable[dict], chunk_chars: int = STREAMED_CHUNK_CHARS) -> Iterator[dict]:
    """A stored session's events as a model would stream them: each text
    event cut into pieces of `chunk_chars` characters, the others as they
    are; the `session` header and stored `seq`s left out (a live session
    has its own)."""
    for event in events:
        if event["type"] == "session":
            continue
        event = {key: value for key, value in event.items() if key != "seq"}
        if event["type"] in TEXT_CHANNELS and len(event["text"]) > chunk_chars:
            text = event.pop("text")
            for offset in range(0, len(text), chunk_chars):
                yield {**event, "text": text[offset : offset + chunk_chars]}
        else:
            yield event


def live_session_stream_stored(
    *,
    live_session_id: int,
    source_session_id: int,
    per_second: float = STREAMED_CHUNKS_PER_SECOND,
    paced_seconds: float = STREAMED_PACED_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> IngestResult:
    """Stream the stored session `source_session_id` into the live session
    `live_session_id` as a producer would, through `live_ingest` (so viewers
    see it arrive and detections fire as for any producer): one message per
    `streamed_events` event, `per_second` of them a second, for
    `paced_seconds`; then the rest in messages of `STREAMED_BATCH_EVENTS`
    events without waiting. Like a guarded producer it aborts once the
    session is stopped (a stop-level detection), leaving it `stopped`; a
    stream that ends without one is closed. Returns the last answer."""
    paced = int(per_second * paced_seconds)  # events sent one a message, at the pace
    events = streamed_events(event for _, event in session_event_stream(source_session_id))
    for seq, message in enumerate(_streamed_messages(events, paced), start=1):
        result = live_ingest(session_id=live_session_id, seq=seq, events=message)
        if result.state == Session.State.STOPPED:
            return result
        if seq < paced:
            sleep(1 / per_second)
    return live_session_close(session_id=live_session_id)


def _streamed_messages(events: Iterator[dict], paced: int) -> Iterator[list[dict]]:
    """The first `paced` events one a message, then the others in messages
    of `STREAMED_BATCH_EVENTS` (the last one of what is left)."""
    for event in islice(events, paced):
        yield [event]
    while batch := list(islice(events, STREAMED_BATCH_EVENTS)):
        yield batch


def live_session_from_stored(*, source: Session, user) -> Session:
    """A new live session in `source`'s project, of its model, that a worker
    streams `source` into (`live_session_stream_stored`, task
    `stream_stored_session`) once this transaction commits: to watch a
    stored session unfold live and see where the detectors stop it."""
    from .tasks import stream_stored_session  # tasks import this module

    live = session_create_live(
        model=source.model, title=f"#{source.pk} streamed live: {source.title}", uploader=user, project=source.project
    )
    transaction.on_commit(lambda: stream_stored_session.delay(live.pk, source.pk))
    return live


def live_session_close(*, session_id: int) -> IngestResult:
    """Close the session (idempotent): it takes no more events. Only an open
    (live, looping, stopped or stalled) session can be closed."""
    with transaction.atomic():
        session, stream = _locked_stream(session_id)
        closed = transition(session_id, session.state, Trigger.CLOSE)
        if session.state == closed:
            return IngestResult(ack=stream.acked_seq, state=session.state)
        Session.objects.filter(pk=session.pk).update(state=closed)
        transaction.on_commit(lambda: send_to_viewers(session_id, [viewer_text({"state": closed})]))
    return IngestResult(ack=stream.acked_seq, state=closed)


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
            if takes(session.state, Trigger.STALL) and last <= cutoff:
                stalled = transition(session_id, session.state, Trigger.STALL)
                Session.objects.filter(pk=session_id).update(state=stalled)
                transaction.on_commit(
                    lambda session_id=session_id, stalled=stalled: send_to_viewers(
                        session_id, [viewer_text({"state": stalled})]
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
                monitors.put(session_id, stream.revision, monitor)
                continue
            detections = _store_found(session, found, [])
            _streams_written([(session, stream, monitor, True)])
            stream.save(update_fields=["monitor", "monitor_events", "revision"])
            payloads: list[ViewerMessage] = [{"detection": detection} for detection in detections]
            if monitor.stopped and (stopped := transition(session_id, session.state, Trigger.STOPPED)) != session.state:
                Session.objects.filter(pk=session_id).update(state=stopped)
                payloads.append({"state": stopped})
            transaction.on_commit(partial(_send_tick, session_id, payloads, detections))
            fired.append(session_id)
    return fired


def _send_tick(session_id: int, payloads: list[ViewerMessage], detections: list[dict]) -> None:
    send_to_viewers(session_id, [viewer_text(payload) for payload in payloads])
    send_to_producer(session_id, detections)
