"""The label calls of the JSON API (../shared/docs/api.md, "Labels and profiles")."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from loopguard_site.api import ApiError, api_view, json_body
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session

from .selectors import label_to_dict
from .services import LabelError, adjudication_set, label_detection_set, label_session_set


def _found(model: type, pk: object, noun: str):
    if isinstance(pk, bool) or not isinstance(pk, int):
        raise ApiError(f'"{noun}" must be an id', field=noun)
    row = model.objects.filter(pk=pk).first()
    if row is None:
        raise ApiError(f"no {noun} with id {pk}", status=404)
    return row


@api_view(("POST",))
def detection_label_create(request: HttpRequest, detection_id: int) -> JsonResponse:
    detection = _found(Detection, detection_id, "detection")
    body = json_body(request)
    try:
        label = label_detection_set(
            detection=detection, reviewer=request.user, label=body.get("label"), note=body.get("note", "")
        )
    except LabelError as exc:
        raise ApiError(str(exc), field=exc.field) from exc
    return JsonResponse(label_to_dict(label), status=201)


@api_view(("POST",))
def session_label_create(request: HttpRequest, session_id: int) -> JsonResponse:
    session = _found(Session, session_id, "session")
    body = json_body(request)
    try:
        label = label_session_set(
            session=session,
            reviewer=request.user,
            label=body.get("label"),
            channel=body.get("channel"),
            start=body.get("start"),
            end=body.get("end"),
            note=body.get("note", ""),
        )
    except LabelError as exc:
        raise ApiError(str(exc), field=exc.field) from exc
    return JsonResponse(label_to_dict(label), status=201)


@api_view(("POST",))
def adjudication_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    session = _found(Session, body.get("session"), "session")
    try:
        adjudication = adjudication_set(
            session=session, item=body.get("item"), label=body.get("label"), adjudicator=request.user
        )
    except PermissionError as exc:
        raise ApiError(str(exc), status=403) from exc
    except LabelError as exc:
        raise ApiError(str(exc), field=exc.field) from exc
    return JsonResponse({"session": session.pk, "item": adjudication.item, "label": adjudication.label}, status=201)
