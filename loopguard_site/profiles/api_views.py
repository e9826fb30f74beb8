"""The profile calls of the JSON API (../shared/docs/api.md, "Labels and
profiles"), and the tuning jobs'."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from loopguard_site.api import ApiError, api_view, json_body

from .diff import profile_diff
from .models import ProfileVersion, TuningJob
from .selectors import latest_versions, profile_version_get, tuning_job_get, tuning_progress
from .services import ProfileError, profile_from_tuning, profiles_export, profiles_import, tuning_job_create

CONTENT_TYPES = {"toml": "application/toml", "json": "application/json"}


def _summary(version: ProfileVersion) -> dict:
    return {"name": version.name, "models": version.models, "version": version.version}


def _api_error(exc: ProfileError) -> ApiError:
    return ApiError(str(exc), field=exc.field, line=exc.line)


@api_view(("GET",))
def profile_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"profiles": [_summary(v) for v in latest_versions()]})


@api_view(("GET",))
def profile_export(request: HttpRequest) -> HttpResponse:
    fmt = request.GET.get("format", "toml")
    try:
        text = profiles_export(fmt=fmt)
    except ProfileError as exc:
        raise _api_error(exc) from exc
    response = HttpResponse(text, content_type=f"{CONTENT_TYPES[fmt]}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="loopguard-profiles.{fmt}"'
    return response


@api_view(("POST",))
def profile_import(request: HttpRequest) -> JsonResponse:
    upload = request.FILES.get("file")
    raw = upload.read() if upload is not None else request.body
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError("the file is not UTF-8 text") from exc
    try:
        versions = profiles_import(text=text, user=request.user, fmt=request.GET.get("format") or None)
    except ProfileError as exc:
        raise _api_error(exc) from exc
    return JsonResponse({"profiles": [_summary(v) for v in versions]}, status=201)


def _version(name: str, number: object, field: str) -> ProfileVersion:
    version = profile_version_get(name, int(number)) if str(number).isdigit() else None
    if version is None:
        raise ApiError(f"profile {name!r} has no version {number}", status=404, field=field)
    return version


@api_view(("GET",))
def profile_diff_view(request: HttpRequest, name: str) -> JsonResponse:
    old, new = _version(name, request.GET.get("a"), "a"), _version(name, request.GET.get("b"), "b")
    return JsonResponse({"name": name, "a": old.version, "b": new.version, "diff": profile_diff(old.table, new.table)})


def _job(job_id: int) -> TuningJob:
    job = tuning_job_get(job_id)
    if job is None:
        raise ApiError(f"no tuning job with id {job_id}", status=404)
    return job


@api_view(("POST",))
def tuning_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    try:
        job = tuning_job_create(
            user=request.user,
            model_glob=body.get("model"),
            base_profile=body.get("profile"),
            fp_budget=body.get("fp_budget", 0),
        )
    except ProfileError as exc:
        raise _api_error(exc) from exc
    return JsonResponse({"id": job.pk, "state": job.state}, status=202)


@api_view(("GET",))
def tuning_detail(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(tuning_progress(_job(job_id)))


@api_view(("POST",))
def tuning_save(request: HttpRequest, job_id: int) -> JsonResponse:
    body = json_body(request)
    try:
        version = profile_from_tuning(
            job=_job(job_id), name=body.get("name"), models=body.get("models"), user=request.user
        )
    except ProfileError as exc:
        raise _api_error(exc) from exc
    return JsonResponse(_summary(version), status=201)
