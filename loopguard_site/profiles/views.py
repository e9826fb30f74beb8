"""The profiles pages: stored profiles and their versions (with a diff of
two), a tuning form, and a tuning job's progress and result."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from loopguard_site.accounts.access import ProjectChoiceError, project_for, projects_with_role
from loopguard_site.accounts.models import Role
from loopguard_site.replay.selectors import profile_names_of

from .diff import profile_diff
from .selectors import latest_versions, profile_versions, tuning_job_for, versions_visible_to
from .services import ProfileError, profile_from_tuning, tuning_job_create


@login_required
@require_GET
def profile_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "profiles/profile_list.html", {"versions": latest_versions(versions_visible_to(request.user))}
    )


@login_required
@require_GET
def profile_detail(request: HttpRequest, name: str) -> HttpResponse:
    versions = profile_versions(request.user, name)
    if not versions:
        raise Http404(f"no stored profile {name!r}")
    by_number = {v.version: v for v in versions}
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    old = by_number.get(int(a)) if a.isdigit() else None
    new = by_number.get(int(b)) if b.isdigit() else None
    diff = profile_diff(old.table, new.table) if old and new else None
    context = {"name": name, "versions": versions, "old": old, "new": new, "diff": diff}
    return render(request, "profiles/profile_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tuning_new(request: HttpRequest) -> HttpResponse:
    error = None
    projects = projects_with_role(request.user, Role.ADMIN)
    if request.method == "POST":
        budget = request.POST.get("fp_budget", "0")
        try:
            project = project_for(request.user, request.POST.get("project"), Role.ADMIN)
            job = tuning_job_create(
                user=request.user,
                project=project,
                model_glob=request.POST.get("model", ""),
                base_profile=request.POST.get("profile", ""),
                fp_budget=int(budget) if budget.isdigit() else budget,
            )
        except ProjectChoiceError as exc:
            if exc.status == 403:
                raise PermissionDenied(str(exc)) from exc
            error = f"project: {exc}"
        except ProfileError as exc:
            error = str(exc)
        else:
            return redirect("profiles:tuning_detail", job_id=job.pk)
    names = profile_names_of(p.pk for p in projects)  # built-in, and those of the projects the user may tune
    context = {"profiles": names, "projects": projects, "error": error, "form": request.POST}
    return render(request, "profiles/tuning_new.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tuning_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = tuning_job_for(request.user, job_id, Role.ADMIN if request.method == "POST" else Role.VIEWER)
    error = None
    if request.method == "POST":
        models = [m.strip() for m in request.POST.get("models", "").split(",") if m.strip()]
        try:
            version = profile_from_tuning(job=job, name=request.POST.get("name", ""), models=models, user=request.user)
        except ProfileError as exc:
            error = str(exc)
        else:
            return redirect("profiles:profile_detail", name=version.name)
    metrics = [("before", job.result["before"]), ("after", job.result["after"])] if job.result else []
    return render(request, "profiles/tuning_detail.html", {"job": job, "metrics": metrics, "error": error})
