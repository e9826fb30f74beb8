"""The home page: the project's state at a glance."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from loopguard_site.accounts.access import visible_project_ids
from loopguard_site.replay.selectors import recent_jobs

from . import charts, selectors


@login_required
@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    projects = visible_project_ids(request.user)  # asked once for every figure
    first_day, last_day = selectors.detection_window()
    per_model, verdicts = selectors.sessions_per_model(projects), selectors.verdicts_per_model(projects)
    live_states = selectors.live_state_counts(projects)
    figures = {
        "models": charts.models_figure(per_model, verdicts),
        "detections": charts.detections_figure(selectors.detections_per_day(projects, first_day), first_day, last_day),
        "live": charts.live_figure(live_states),
        "labels": charts.labels_figure(selectors.label_progress(projects, verdicts)),
    }
    context = {
        "totals": selectors.session_totals(per_model, live_states, projects),
        "figures": figures,
        "plots": {name: {"data": fig["data"], "layout": fig["layout"]} for name, fig in figures.items()},
        "detection_days": selectors.DETECTION_DAYS,
        "live_sessions": selectors.live_sessions(projects),
        "replay_jobs": recent_jobs(request.user, selectors.RECENT_JOBS),
        "tuning_jobs": selectors.recent_tuning_jobs(projects),
    }
    return render(request, "overview/overview.html", context)
