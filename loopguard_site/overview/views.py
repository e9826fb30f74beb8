"""The home page: the project's state at a glance."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from loopguard_site.replay.selectors import recent_jobs

from . import charts, selectors


@login_required
@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    user = request.user
    first_day, last_day = selectors.detection_window()
    figures = {
        "models": charts.models_figure(selectors.sessions_per_model(user), selectors.verdicts_per_model(user)),
        "detections": charts.detections_figure(selectors.detections_per_day(user, first_day), first_day, last_day),
        "live": charts.live_figure(selectors.live_state_counts(user)),
        "labels": charts.labels_figure(selectors.label_progress(user)),
    }
    context = {
        "totals": selectors.session_totals(user),
        "figures": figures,
        "plots": {name: {"data": fig["data"], "layout": fig["layout"]} for name, fig in figures.items()},
        "detection_days": selectors.DETECTION_DAYS,
        "live_sessions": selectors.live_sessions(user),
        "replay_jobs": recent_jobs(user, selectors.RECENT_JOBS),
        "tuning_jobs": selectors.recent_tuning_jobs(user),
    }
    return render(request, "overview/overview.html", context)
