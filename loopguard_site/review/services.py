"""Writes of the review app: labels and adjudications."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from loopguard_site.errors import FieldError
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session

from .models import Adjudication, Label
from .selectors import channel_length, detection_item
from .truth import DETECTION_LABELS, MISSED_LOOP, SESSION_ITEM, SESSION_LABELS

SPAN_CHANNELS = ("reasoning", "content", "tools")


def _checked_note(note: object) -> str:
    if note is None:
        return ""
    if not isinstance(note, str):
        raise FieldError('"note" must be a string', field="note")
    return note


def _checked_label(label: object, allowed: tuple[str, ...]) -> str:
    if label not in allowed:
        raise FieldError(f'"label" must be one of {", ".join(allowed)}, not {label!r}', field="label")
    return label


def label_detection_set(*, detection: Detection, reviewer: AbstractBaseUser, label: object, note: object = "") -> Label:
    """The reviewer's label of a detection's item, replacing their earlier one."""
    values = {
        "label": _checked_label(label, DETECTION_LABELS),
        "note": _checked_note(note),
        "detection": detection,
        "profile": detection.profile,
        "detector": detection.detector,
        "detection_type": detection.type,
        "channel": detection.channel,
        "start": detection.start,
        "end": detection.end,
        "at": detection.at,
    }
    stored, _ = Label.objects.update_or_create(
        session_id=detection.session_id, item=detection_item(detection), reviewer=reviewer, defaults=values
    )
    return stored


def _checked_offset(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(f'"{name}" must be a whole number', field=name)
    return value


def label_session_set(
    *,
    session: Session,
    reviewer: AbstractBaseUser,
    label: object,
    channel: object = None,
    start: object = None,
    end: object = None,
    note: object = "",
) -> Label:
    """The reviewer's session label: a missed loop over [start, end) of a
    channel (within the channel's length), or clean. Replaces their earlier one."""
    label = _checked_label(label, SESSION_LABELS)
    values: dict = {"label": label, "note": _checked_note(note), "channel": "", "start": None, "end": None}
    if label == MISSED_LOOP:
        if channel not in SPAN_CHANNELS:
            raise FieldError(f'"channel" must be one of {", ".join(SPAN_CHANNELS)}, not {channel!r}', field="channel")
        start, end = _checked_offset(start, "start"), _checked_offset(end, "end")
        length = channel_length(session.pk, channel)
        if not 0 <= start < end:
            raise FieldError('"start" must be at least 0 and below "end"', field="start")
        if end > length:
            raise FieldError(f'"end" {end} is past the end of the {channel} channel ({length})', field="end")
        values.update(channel=channel, start=start, end=end)
    stored, _ = Label.objects.update_or_create(session=session, item=SESSION_ITEM, reviewer=reviewer, defaults=values)
    return stored


def adjudication_set(*, session: Session, item: str, label: object, adjudicator: AbstractBaseUser) -> Adjudication:
    """An admin's final label for a labelled item (that the adjudicator is an
    admin of the session's project, the caller asks accounts.access)."""
    if not Label.objects.filter(session=session, item=item).exists():
        raise FieldError(f"session {session.pk} has no labelled item {item!r}", field="item")
    allowed = SESSION_LABELS if item == SESSION_ITEM else DETECTION_LABELS
    stored, _ = Adjudication.objects.update_or_create(
        session=session, item=item, defaults={"label": _checked_label(label, allowed), "adjudicator": adjudicator}
    )
    return stored
