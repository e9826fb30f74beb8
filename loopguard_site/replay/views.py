"""The lab's replay pages: the replay form, a job's live progress, and the
profile comparison."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from loopguard_site.accounts.access import (
    project_for,
    projects_with_role,
)
from loopguard_site.accounts.models import Role
from loopguard_site.errors import FieldError, form_error_add
from loopguard_site.transcripts.selectors import sessions_matching, sessions_visible_to

from .compare import compare_profiles
from .forms import CompareForm, ReplayForm
from .messages import job_progress
from .models import ReplayJob
from .selectors import job_results, jobs_visible_to, profile_names_of, replay_job_for
from .services import replay_job_create

JOBS_PAGE_SIZE = 50
FORM_SESSIONS = 200  # newest sessions offered as tick boxes; older ones through "all" and a filter


@login_required
@require_http_methods(["GET", "POST"])
def replay_new(request: HttpRequest) -> HttpResponse:
    projects = projects_with_role(request.user, Role.REVIEWER)
    sessions = sessions_matching(among=sessions_visible_to(request.user).filter(project__in=projects))
    form = ReplayForm(
        request.POST or None,
        projects=projects,
        session_choices=[(s.pk, f"#{s.pk} {s.title}") for s in sessions[:FORM_SESSIONS]],
        profile_names=profile_names_of(p.pk for p in projects),
        initial={"sessions": request.GET.getlist("session")},
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        everything = data["scope"] == "all"
        try:
            project = project_for(request.user, data["project"], Role.REVIEWER)
            job = replay_job_create(
                user=request.user,
                project=project,
                profiles=data["profiles"],
                session_ids=None if everything else data["sessions"],
                all_sessions=everything,
                session_filter={key: data[key] for key in ("model", "format", "tag")} if everything else None,
            )
        except FieldError as exc:
            form_error_add(form, exc)
        else:
            return redirect("replay:job_detail", job_id=job.pk)
    return render(request, "replay/replay_new.html", {"form": form})


@login_required
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(jobs_visible_to(request.user), JOBS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "replay/job_list.html", {"page": page})


@login_required
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    """A job's progress, live; once it has ended, its results, each linking to
    its session at the first detection, and a comparison of its profiles."""
    job = replay_job_for(request.user, job_id)
    ended = job.state not in (ReplayJob.State.QUEUED, ReplayJob.State.RUNNING)
    results, total = job_results(job) if ended else ([], 0)
    names = profile_names_of([job.project_id])
    pair = (job.profiles + [name for name in names if name not in job.profiles])[:2]
    context = {"job": job, "progress": job_progress(job), "ended": ended, "results": results, "result_total": total}
    context["compare_pair"] = pair if len(pair) == 2 else None
    return render(request, "replay/job_detail.html", context)


@login_required
@require_GET
def compare(request: HttpRequest) -> HttpResponse:
    names = profile_names_of(p.pk for p in projects_with_role(request.user, Role.VIEWER))
    # Opened bare, it compares the first two profiles over every replayed session.
    form = CompareForm(request.GET or {"a": names[0], "b": names[1]}, profile_names=names)
    comparison = None
    if form.is_valid():
        data = form.cleaned_data
        comparison = compare_profiles(
            among=sessions_visible_to(request.user),
            session_ids=data["sessions"],
            profile_a=data["a"],
            profile_b=data["b"],
        )
    return render(request, "replay/compare.html", {"form": form, "comparison": comparison})
