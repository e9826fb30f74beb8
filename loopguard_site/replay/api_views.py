"""The replay calls of the JSON API (docs/api.md, "Replays") and
`GET /api/sessions/<id>/detections`."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from loopguard_site.accounts.access import project_for
from loopguard_site.accounts.models import Role
from loopguard_site.api import api_view, json_body
from loopguard_site.errors import FieldError
from loopguard_site.transcripts.selectors import session_for

from .messages import job_progress
from .selectors import detection_to_dict, replay_job_for, session_detections
from .services import replay_job_cancel, replay_job_create


@api_view(("POST",))
def replay_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    all_sessions = body.get("all", False)
    if not isinstance(all_sessions, bool):
        raise FieldError('"all" must be true or false', field="all")
    job = replay_job_create(
        user=request.user,
        project=project_for(request.user, body.get("project"), Role.REVIEWER),
        profiles=body.get("profiles"),
        session_ids=body.get("sessions"),
        all_sessions=all_sessions,
        session_filter=body.get("filter"),
    )
    return JsonResponse({"id": job.pk, "state": job.state}, status=202)


@api_view(("GET",))
def replay_detail(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(dict(job_progress(replay_job_for(request.user, job_id))))


@api_view(("POST",))
def replay_cancel(request: HttpRequest, job_id: int) -> JsonResponse:
    job = replay_job_cancel(job=replay_job_for(request.user, job_id, Role.REVIEWER))
    return JsonResponse({"id": job.pk, "state": job.state})


@api_view(("GET",))
def detection_list(request: HttpRequest, session_id: int) -> JsonResponse:
    session_for(request.user, session_id)
    detections = session_detections(session_id=session_id, profile=request.GET.get("profile"))
    return JsonResponse({"detections": [detection_to_dict(d) for d in detections]})
