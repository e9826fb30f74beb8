"""The profiles pages: built-in and stored profiles (every version's
parameters, a diff of two), a tuning form, and a tuning job's progress and
cross-validated result."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from detector.config import BUILTIN_PROFILES
from detector.tuning import DEFAULT_MIN_SESSIONS
from loopguard_site.accounts.access import project_for, projects_with_role
from loopguard_site.accounts.models import Role
from loopguard_site.errors import FieldError, page_error
from loopguard_site.replay.selectors import profile_names_of

from .diff import profile_diff
from .selectors import (
    builtin_profiles,
    labelled_models,
    latest_versions,
    profile_detectors,
    profile_versions,
    session_titles,
    tuning_job_for,
    versions_visible_to,
)
from .services import profile_from_tuning, profiles_import, tuning_job_cancel, tuning_job_create

VERDICTS = {
    "improves": ("badge-clean", "better on held-out sessions"),
    "loses_recall": ("badge-loop", "loses recall on held-out sessions"),
    "no held-out gain": ("badge-warn", "no gain on held-out sessions"),
    "unchanged": ("badge-muted", "no parameter changed"),
}


@login_required
@require_http_methods(["GET", "POST"])
def profile_list(request: HttpRequest) -> HttpResponse:
    """The profiles; a POST imports a config file (TOML or JSON) as new versions."""
    error = None
    projects = projects_with_role(request.user, Role.ADMIN)
    if request.method == "POST":
        upload = request.FILES.get("file")
        try:
            project = project_for(request.user, request.POST.get("project"), Role.ADMIN)
            if upload is None:
                raise FieldError("choose a TOML or JSON config file to import", field="file")
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FieldError("the file is not UTF-8 text", field="file") from exc
            versions = profiles_import(text=text, project=project, user=request.user)
        except FieldError as exc:
            if upload is not None and exc.field != "project":  # the file's own: named by the file, as `loopguard` does
                error = f"{upload.name}: {str(exc).removeprefix('import: ')}"
            else:
                error = page_error(exc)
        else:
            return redirect("profiles:profile_detail", name=versions[0].name)
    builtins = [{**p, "detectors": profile_detectors(p["table"])} for p in builtin_profiles()]
    stored = [
        {"version": v, "detectors": profile_detectors(v.table)}
        for v in latest_versions(versions_visible_to(request.user))
    ]
    context = {"builtins": builtins, "stored": stored, "projects": projects, "error": error}
    return render(request, "profiles/profile_list.html", context)


@login_required
@require_GET
def profile_detail(request: HttpRequest, name: str) -> HttpResponse:
    if name in BUILTIN_PROFILES:
        (builtin,) = [p for p in builtin_profiles() if p["name"] == name]
        context = {**builtin, "detectors": profile_detectors(builtin["table"])}
        return render(request, "profiles/builtin_detail.html", context)
    versions = profile_versions(request.user, name)
    if not versions:
        raise Http404(f"no stored profile {name!r}")
    by_number = {v.version: v for v in versions}
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not a and not b and len(versions) > 1:  # the two newest, compared at once
        a, b = str(versions[1].version), str(versions[0].version)
    old = by_number.get(int(a)) if a.isdigit() else None
    new = by_number.get(int(b)) if b.isdigit() else None
    diff = profile_diff(old.table, new.table) if old and new else None
    shown = [{"version": v, "detectors": profile_detectors(v.table)} for v in versions]
    context = {"name": name, "versions": shown, "latest": versions[0], "old": old, "new": new, "diff": diff}
    return render(request, "profiles/profile_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tuning_new(request: HttpRequest) -> HttpResponse:
    error = None
    projects = projects_with_role(request.user, Role.ADMIN)
    if request.method == "POST":
        globs = [request.POST.get("model", ""), *request.POST.getlist("models")]
        try:
            project = project_for(request.user, request.POST.get("project"), Role.ADMIN)
            job = tuning_job_create(
                user=request.user,
                project=project,
                model_glob=",".join(globs),
                base_profile=request.POST.get("profile", ""),
                fp_budget=request.POST.get("fp_budget", "0"),
                folds=request.POST.get("folds", "5"),
                max_evaluations=request.POST.get("max_evaluations", "600"),
                time_limit=request.POST.get("time_limit", "600"),
            )
        except FieldError as exc:
            error = page_error(exc)
        else:
            return redirect("profiles:tuning_detail", job_id=job.pk)
    names = profile_names_of(p.pk for p in projects)  # built-in, and those of the projects the user may tune
    context = {
        "profiles": names,
        "projects": projects,
        "models": labelled_models([p.pk for p in projects]),
        "picked": request.POST.getlist("models"),
        "min_sessions": DEFAULT_MIN_SESSIONS,
        "error": error,
        "form": request.POST,
    }
    return render(request, "profiles/tuning_new.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tuning_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = tuning_job_for(request.user, job_id, Role.ADMIN if request.method == "POST" else Role.VIEWER)
    error = None
    if request.method == "POST":
        models = [m.strip() for m in request.POST.get("models", "").split(",") if m.strip()] or None
        try:
            version = profile_from_tuning(
                job=job,
                name=request.POST.get("name", ""),
                models=models,
                user=request.user,
                accept_recall_loss=request.POST.get("accept_recall_loss") == "on",
            )
        except FieldError as exc:
            error = page_error(exc)
        else:
            return redirect("profiles:profile_detail", name=version.name)
    return render(request, "profiles/tuning_detail.html", tuning_context(job, error))


def tuning_context(job, error: str | None) -> dict:
    result = job.result or {}
    metrics = []
    if result:
        metrics = [("Base, in-sample", result["before"]), ("Tuned, in-sample", result["after"])]
        if result.get("held_out"):
            held = result["held_out"]
            metrics += [("Base, held-out", held["before"]), ("Tuned, held-out", held["after"])]
    silent = {"true": 0, "false": 0, "unlabelled": 0, "precision": None, "precision_interval": None}
    detectors: dict[tuple[str, str], dict] = {}
    for when in ("before", "after"):
        for row in result.get("detectors", {}).get(when, []):
            detectors.setdefault((row["detector"], row["type"]), {"before": silent, "after": silent})[when] = row
    titles = session_titles(job.project_id, [s["session"] for s in result.get("sessions", [])])
    return {
        "job": job,
        "result": result,
        "metrics": metrics,
        "detector_rows": [{"detector": d, "type": t, **rows} for (d, t), rows in sorted(detectors.items())],
        "sessions": [{**s, "title": titles.get(s["session"], "")} for s in result.get("sessions", [])],
        "verdict": VERDICTS.get(result.get("verdict", "")),
        "error": error,
    }


@login_required
@require_POST
def tuning_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    tuning_job_cancel(job=tuning_job_for(request.user, job_id, Role.ADMIN))
    return redirect("profiles:tuning_detail", job_id=job_id)
