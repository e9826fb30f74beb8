"""The replay calls of the JSON API (../shared/docs/api.md, "Replays") and
`GET /api/sessions/<id>/detections`."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from loopguard_site.api import ApiError, api_view, json_body

from .messages import job_progress
from .models import ReplayJob
from .selectors import detection_to_dict, existing_session_ids, replay_job_get, session_detections
from .services import ReplayRequestError, replay_job_cancel, replay_job_create


def _job(job_id: int) -> ReplayJob:
    job = replay_job_get(job_id)
    if job is None:
        raise ApiError(f"no replay with id {job_id}", status=404)
    return job


@api_view(("POST",))
def replay_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    all_sessions = body.get("all", False)
    if not isinstance(all_sessions, bool):
        raise ApiError('"all" must be true or false', field="all")
    try:
        job = replay_job_create(
            user=request.user,
            profiles=body.get("profiles"),
            session_ids=body.get("sessions"),
            all_sessions=all_sessions,
            session_filter=body.get("filter"),
        )
    except ReplayRequestError as exc:
        raise ApiError(str(exc), field=exc.field) from exc
    return JsonResponse({"id": job.pk, "state": job.state}, status=202)


@api_view(("GET",))
def replay_detail(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(dict(job_progress(_job(job_id))))


@api_view(("POST",))
def replay_cancel(request: HttpRequest, job_id: int) -> JsonResponse:
    job = replay_job_cancel(job=_job(job_id))
    return JsonResponse({"id": job.pk, "state": job.state})


@api_view(("GET",))
def detection_list(request: HttpRequest, session_id: int) -> JsonResponse:
    if not existing_session_ids([session_id]):
        raise ApiError(f"no session with id {session_id}", status=404)
    detections = session_detections(session_id=session_id, profile=request.GET.get("profile"))
    return JsonResponse({"detections": [detection_to_dict(d) for d in detections]})
