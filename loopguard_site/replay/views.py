"""The lab's replay pages: the replay form, a job's live progress, and the
profile comparison."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from loopguard_site.transcripts.selectors import session_list

from .compare import compare_profiles
from .forms import CompareForm, ReplayForm
from .messages import job_progress
from .selectors import recent_jobs, replay_job_get
from .services import ReplayRequestError, replay_job_create

FORM_SESSIONS = 200  # newest sessions offered as tick boxes; older ones through "all" and a filter


@login_required
@require_http_methods(["GET", "POST"])
def replay_new(request: HttpRequest) -> HttpResponse:
    choices = [(s.pk, f"#{s.pk} {s.title}") for s in session_list()[:FORM_SESSIONS]]
    initial = {"sessions": request.GET.getlist("session")}
    form = ReplayForm(request.POST or None, session_choices=choices, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        everything = data["scope"] == "all"
        try:
            job = replay_job_create(
                user=request.user,
                profiles=data["profiles"],
                session_ids=None if everything else data["sessions"],
                all_sessions=everything,
                session_filter={key: data[key] for key in ("model", "format", "tag")} if everything else None,
            )
        except ReplayRequestError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            return redirect("replay:job_detail", job_id=job.pk)
    return render(request, "replay/replay_new.html", {"form": form, "jobs": recent_jobs()})


@login_required
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = replay_job_get(job_id)
    if job is None:
        raise Http404(f"no replay with id {job_id}")
    return render(request, "replay/job_detail.html", {"job": job, "progress": job_progress(job)})


@login_required
@require_GET
def compare(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    comparison = None
    if form.is_valid():
        data = form.cleaned_data
        comparison = compare_profiles(session_ids=data["sessions"], profile_a=data["a"], profile_b=data["b"])
    return render(request, "replay/compare.html", {"form": form, "comparison": comparison})
