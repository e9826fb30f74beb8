"""The label calls of the JSON API (docs/api.md, "Labels and profiles")."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from loopguard_site.accounts.access import object_for
from loopguard_site.accounts.models import Role
from loopguard_site.api import api_view, json_body
from loopguard_site.errors import FieldError
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.selectors import session_for

from .selectors import label_to_dict
from .services import adjudication_set, label_detection_set, label_session_set


@api_view(("POST",))
def detection_label_create(request: HttpRequest, detection_id: int) -> JsonResponse:
    detection = object_for(
        request.user,
        Detection.objects.all(),
        detection_id,
        role=Role.REVIEWER,
        noun="detection",
        project_field="session__project",
    )
    body = json_body(request)
    label = label_detection_set(
        detection=detection, reviewer=request.user, label=body.get("label"), note=body.get("note", "")
    )
    return JsonResponse(label_to_dict(label), status=201)


@api_view(("POST",))
def session_label_create(request: HttpRequest, session_id: int) -> JsonResponse:
    session = session_for(request.user, session_id, Role.REVIEWER)
    body = json_body(request)
    label = label_session_set(
        session=session,
        reviewer=request.user,
        label=body.get("label"),
        channel=body.get("channel"),
        start=body.get("start"),
        end=body.get("end"),
        note=body.get("note", ""),
    )
    return JsonResponse(label_to_dict(label), status=201)


@api_view(("POST",))
def adjudication_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    session_id = body.get("session")
    if isinstance(session_id, bool) or not isinstance(session_id, int):
        raise FieldError('"session" must be an id', field="session")
    session = session_for(request.user, session_id, Role.ADMIN)
    adjudication = adjudication_set(
        session=session, item=body.get("item"), label=body.get("label"), adjudicator=request.user
    )
    return JsonResponse({"session": session.pk, "item": adjudication.item, "label": adjudication.label}, status=201)
