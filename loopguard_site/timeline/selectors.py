"""Reads of the session page: a session's streams, the profiles it was
replayed through, and that profile's detections and checkpoint evaluations."""

from __future__ import annotations

from loopguard_site.replay.models import CheckpointEvaluation, Detection, ReplayRun
from loopguard_site.replay.selectors import detection_to_dict, profile_names, session_detections
from loopguard_site.transcripts.models import Event, Session

from .streams import SessionStreams, streams_from_events

EVENT_CHUNK = 2000  # events read per database round trip


def session_streams(session: Session) -> SessionStreams:
    """The session's events laid out by streams.py, read in seq order."""
    events = Event.objects.filter(session=session).order_by("seq").values_list("seq", "data")
    return streams_from_events(events.iterator(chunk_size=EVENT_CHUNK))


def session_profiles(session_id: int) -> list[str]:
    """Profiles with results for the session (a finished replay, detections
    or checkpoint evaluations): the built-in ones in their order, then the
    others by name."""
    names = set(
        ReplayRun.objects.filter(session_id=session_id, state=ReplayRun.State.DONE).values_list("profile", flat=True)
    )
    names.update(Detection.objects.filter(session_id=session_id).values_list("profile", flat=True))
    names.update(CheckpointEvaluation.objects.filter(session_id=session_id).values_list("profile", flat=True))
    builtin = [name for name in profile_names() if name in names]
    return builtin + sorted(names - set(builtin))


def session_detection_rows(*, session_id: int, profile: str) -> list[dict]:
    """The profile's detections in firing order, as the API gives them plus `event_seq`."""
    return [
        detection_to_dict(d) | {"event_seq": d.event_seq}
        for d in session_detections(session_id=session_id, profile=profile)
    ]


def session_checkpoint_rows(*, session_id: int, profile: str) -> list[dict]:
    """The profile's checkpoint evaluations in the order they were recorded."""
    rows = CheckpointEvaluation.objects.filter(session_id=session_id, profile=profile).order_by("event_seq", "id")
    return [
        {
            "detector": row.detector,
            "channel": row.channel,
            "checkpoint": row.checkpoint,
            "start": row.start,
            "end": row.end,
            "check": row.check_name,
            "result": row.result,
            "turn": row.turn,
            "event_seq": row.event_seq,
        }
        for row in rows
    ]
