"""Writes of live sessions: ingest, close, and the stalled sweep.

`live_ingest` is the one ingest, for the producer socket and for HTTP
batches alike: one transaction per message, under a row lock on the
session, so messages of one session are serialized whatever
process or socket they come through. The message's seq must be the next one
(a seq already acknowledged is acknowledged again and stored no second time;
a gap is an error); its events are stored, fed to the session's Monitor
(unpickled from the `LiveStream`, pickled back after), and every detection
is stored as a `replay.Detection` of the session's profile. Viewers hear of
the message once the transaction commits.

States (`Session.State`): `live` until a detector fires, then `looping`;
`stopped` once a stop-level detection fired (sticky: the producer must
abort); `stalled` when no event came for LOOPGUARD_LIVE_STALL_SECONDS (the
next event revives it); `closed` when the producer says `{"close": true}`
— a closed session takes no more events. A `finish` event does not close a
session: an agent session goes on with its next turn.
"""

from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from detector.detection import Checkpoint
from detector.detection import Detection as Found
from detector.monitor import Monitor
from loopguard_site.replay.models import CheckpointEvaluation, Detection
from loopguard_site.replay.selectors import detection_to_dict, replay_config
from loopguard_site.transcripts.models import Event, Session

from .messages import ViewerMessage, send_to_producer, send_to_viewers
from .models import LiveStream
from .protocol import ProtocolError
from .selectors import OPEN_STATES, stalled_candidate_ids, tick_candidate_ids

REPLAY_CHUNK = 2000  # events read per round trip when a Monitor is rebuilt


@dataclass(frozen=True)
class IngestResult:
    """What the producer is told: the seq acknowledged, the detections the
    message fired (as `live_detection_dict` gives them) and the session's state."""

    ack: int
    state: str
    detections: list[dict] = field(default_factory=list)
    duplicate: bool = False


def live_detection_dict(detection: Detection) -> dict:
    """A stored detection as the live sockets send it: the API's fields plus
    `event_seq`, the event that fired it."""
    return {**detection_to_dict(detection), "event_seq": detection.event_seq}


def _locked_stream(session_id: int) -> tuple[Session, LiveStream]:
    """The session, locked until the transaction ends (every writer of a live
    session's events and state takes this lock first), and its LiveStream."""
    session = Session.objects.select_for_update().filter(pk=session_id).first()
    if session is None:
        raise ProtocolError(f"no session {session_id}", status=404)  # deleted while a producer streamed
    stream, _ = LiveStream.objects.get_or_create(session=session)
    return session, stream


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
    return Monitor(session.profile or "default", config=replay_config(), model=session.model)


def _rebuilt_monitor(session: Session) -> Monitor:
    """A Monitor fed every stored event again: the fallback when the pickled
    one is missing or no longer loads (the detector code changed)."""
    monitor = _new_monitor(session)
    events = Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
    for data in events.iterator(chunk_size=REPLAY_CHUNK):
        monitor.feed(data)
    monitor.take_checkpoints()  # stored when they were first recorded
    return monitor


def stream_monitor(session: Session, stream: LiveStream) -> Monitor:
    """The session's Monitor as the last stored message left it."""
    if stream.monitor is not None:
        try:
            return pickle.loads(bytes(stream.monitor))  # noqa: S301 - written by live_ingest only
        except Exception:  # noqa: BLE001 - any unpickling failure means "rebuild"
            pass
    if session.event_count == 0:
        return _new_monitor(session)
    return _rebuilt_monitor(session)


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
        Detection(session=session, profile=session.profile, event_seq=number, **asdict(d)) for number, d in found
    )
    CheckpointEvaluation.objects.bulk_create(
        CheckpointEvaluation(session=session, profile=session.profile, event_seq=number, **_checkpoint_fields(c))
        for number, c in checkpoints
    )
    return [live_detection_dict(row) for row in rows]


def live_ingest(*, session_id: int, seq: int, events: list[dict], close: bool = False) -> IngestResult:
    """Store one producer message (already checked by `protocol.parse_message`),
    detect, and answer what to acknowledge. `ProtocolError` for a gap in the
    seq or a session that takes no events; nothing is stored then."""
    with transaction.atomic():
        session, stream = _locked_stream(session_id)
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
        monitor = stream_monitor(session, stream)
        first = session.event_count + 1
        found: list[tuple[int, Found]] = []
        checkpoints: list[tuple[int, Checkpoint]] = []
        for number, event in enumerate(events, start=first):
            found.extend((number, detection) for detection in monitor.feed(event))
            checkpoints.extend((number, checkpoint) for checkpoint in monitor.take_checkpoints())
        Event.objects.bulk_create(
            Event(session=session, seq=number, type=event["type"], data=event)
            for number, event in enumerate(events, start=first)
        )
        detections = _store_found(session, found, checkpoints)
        old_state = session.state
        state = Session.State.CLOSED if close else _state_after(session, monitor, bool(found))
        Session.objects.filter(pk=session.pk).update(event_count=F("event_count") + len(events), state=state)
        stream.acked_seq = seq
        stream.monitor = pickle.dumps(monitor, protocol=pickle.HIGHEST_PROTOCOL)
        stream.last_event_at = timezone.now()
        stream.save()
        payloads: list[ViewerMessage] = [
            {"events": [{**event, "seq": number} for number, event in enumerate(events, start=first)]}
        ]
        payloads += [{"detection": detection} for detection in detections]
        if state != old_state:
            payloads.append({"state": state})
        transaction.on_commit(lambda: send_to_viewers(session_id, payloads))
    return IngestResult(ack=seq, state=state, detections=detections)


def live_session_close(*, session_id: int) -> IngestResult:
    """Close the session (idempotent): it takes no more events. Only an open
    (live, looping, stopped or stalled) session can be closed."""
    with transaction.atomic():
        session, stream = _locked_stream(session_id)
        if session.state == Session.State.CLOSED:
            return IngestResult(ack=stream.acked_seq, state=session.state)
        _check_open(session)
        Session.objects.filter(pk=session.pk).update(state=Session.State.CLOSED)
        transaction.on_commit(lambda: send_to_viewers(session_id, [{"state": Session.State.CLOSED}]))
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
                    lambda session_id=session_id: send_to_viewers(session_id, [{"state": Session.State.STALLED}])
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
            if monitor.ctx.t is None:
                continue
            found = [
                (session.event_count, d)
                for d in monitor.tick(monitor.ctx.t + (now - stream.last_event_at).total_seconds())
            ]
            if not found:
                continue
            detections = _store_found(session, found, [])
            stream.monitor = pickle.dumps(monitor, protocol=pickle.HIGHEST_PROTOCOL)
            stream.save(update_fields=["monitor"])
            payloads: list[ViewerMessage] = [{"detection": detection} for detection in detections]
            if monitor.stopped and session.state != Session.State.STOPPED:
                Session.objects.filter(pk=session_id).update(state=Session.State.STOPPED)
                payloads.append({"state": Session.State.STOPPED})
            transaction.on_commit(partial(_send_tick, session_id, payloads, detections))
            fired.append(session_id)
    return fired


def _send_tick(session_id: int, payloads: list[ViewerMessage], detections: list[dict]) -> None:
    send_to_viewers(session_id, payloads)
    send_to_producer(session_id, detections)
