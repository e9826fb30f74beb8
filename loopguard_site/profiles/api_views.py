"""The profile calls of the JSON API (docs/api.md, "Labels and
profiles"), and the tuning jobs'."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from loopguard_site.accounts.access import project_for
from loopguard_site.accounts.models import Role
from loopguard_site.api import api_view, json_body
from loopguard_site.errors import FieldError

from .diff import profile_diff
from .models import ProfileVersion
from .selectors import latest_versions, tuning_job_for, tuning_progress, versions_visible_to
from .services import (
    profile_from_tuning,
    profile_version_text,
    profiles_export,
    profiles_import,
    tuning_job_cancel,
    tuning_job_create,
)

CONTENT_TYPES = {"toml": "application/toml", "json": "application/json"}


def _summary(version: ProfileVersion) -> dict:
    return {"name": version.name, "models": version.models, "version": version.version}


@api_view(("GET",))
def profile_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"profiles": [_summary(v) for v in latest_versions(versions_visible_to(request.user))]})


@api_view(("GET",))
def profile_export(request: HttpRequest) -> HttpResponse:
    fmt = request.GET.get("format", "toml")
    text = profiles_export(versions=versions_visible_to(request.user), fmt=fmt)
    return _config_file(text, fmt, "loopguard-profiles")


def _config_file(text: str, fmt: str, stem: str) -> HttpResponse:
    response = HttpResponse(text, content_type=f"{CONTENT_TYPES[fmt]}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}.{fmt}"'
    return response


@api_view(("GET",))
def profile_version_export(request: HttpRequest, name: str) -> HttpResponse:
    """One version of a stored profile (`version`, default the latest) as a config file."""
    versions = versions_visible_to(request.user).filter(name=name)
    number = request.GET.get("version")
    version = _version(request, name, number, "version") if number is not None else versions.first()
    if version is None:
        raise FieldError(f"no stored profile {name!r}", status=404)
    fmt = request.GET.get("format", "toml")
    text = profile_version_text(version=version, fmt=fmt)
    return _config_file(text, fmt, f"{name}-v{version.version}")


@api_view(("POST",))
def profile_import(request: HttpRequest) -> JsonResponse:
    project = project_for(request.user, request.GET.get("project"), Role.ADMIN)  # the body is the file
    if request.content_type == "multipart/form-data":  # its body is read as the form: the file is a field
        upload = request.FILES.get("file")
        if upload is None:
            raise FieldError("no file: send the config file as a multipart field named 'file'", field="file")
        raw = upload.read()
    else:
        raw = request.body
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FieldError("the file is not UTF-8 text") from exc
    versions = profiles_import(text=text, project=project, user=request.user, fmt=request.GET.get("format") or None)
    return JsonResponse({"profiles": [_summary(v) for v in versions]}, status=201)


def _version(request: HttpRequest, name: str, number: object, field: str) -> ProfileVersion:
    versions = versions_visible_to(request.user).filter(name=name)
    version = versions.filter(version=int(number)).first() if str(number).isdigit() else None
    if version is None:
        raise FieldError(f"profile {name!r} has no version {number}", status=404, field=field)
    return version


@api_view(("GET",))
def profile_diff_view(request: HttpRequest, name: str) -> JsonResponse:
    old, new = _version(request, name, request.GET.get("a"), "a"), _version(request, name, request.GET.get("b"), "b")
    return JsonResponse({"name": name, "a": old.version, "b": new.version, "diff": profile_diff(old.table, new.table)})


@api_view(("POST",))
def tuning_create(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    job = tuning_job_create(
        user=request.user,
        project=project_for(request.user, body.get("project"), Role.ADMIN),
        model_glob=body.get("model"),
        base_profile=body.get("profile"),
        fp_budget=body.get("fp_budget", 0),
        folds=body.get("folds", 5),
        max_evaluations=body.get("max_evaluations", 600),
        time_limit=body.get("time_limit", 600),
    )
    return JsonResponse({"id": job.pk, "state": job.state}, status=202)


@api_view(("GET",))
def tuning_detail(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(tuning_progress(tuning_job_for(request.user, job_id)))


@api_view(("POST",))
def tuning_save(request: HttpRequest, job_id: int) -> JsonResponse:
    job = tuning_job_for(request.user, job_id, Role.ADMIN)  # first: another project's job is no job
    body = json_body(request)
    version = profile_from_tuning(
        job=job,
        name=body.get("name"),
        models=body.get("models"),
        user=request.user,
        accept_recall_loss=body.get("accept_recall_loss", False),
    )
    return JsonResponse(_summary(version), status=201)


@api_view(("POST",))
def tuning_cancel(request: HttpRequest, job_id: int) -> JsonResponse:
    job = tuning_job_cancel(job=tuning_job_for(request.user, job_id, Role.ADMIN))
    return JsonResponse(tuning_progress(job))
