"""The review pages: the queue (one detection at a time, keyboard driven)
and agreement with its disagreements."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from detector.registry import DETECTORS
from loopguard_site.accounts.access import object_for, projects_with_role
from loopguard_site.accounts.models import Role
from loopguard_site.errors import FieldError, page_error
from loopguard_site.replay.models import Detection
from loopguard_site.replay.selectors import profile_names_of
from loopguard_site.transcripts.selectors import session_filter_options, session_for, sessions_visible_to

from .selectors import (
    QueueFilter,
    agreement_rows,
    detection_context,
    detection_labels,
    disagreements,
    queue_neighbour,
    queue_next,
    reviewer_progress,
)
from .services import adjudication_set


def _int_or_zero(raw: str | None) -> int:
    return int(raw) if raw and raw.isdigit() else 0


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    filters = QueueFilter(*(request.GET.get(key, "").strip() for key in ("model", "detector", "profile")))
    among = sessions_visible_to(request.user)
    chosen = _int_or_zero(request.GET.get("detection"))
    if chosen:
        detection = object_for(
            request.user,
            Detection.objects.select_related("session"),
            chosen,
            noun="detection",
            project_field="session__project",
        )
    else:
        after = _int_or_zero(request.GET.get("after"))
        detection = queue_next(among=among, reviewer=request.user, queue=filters, after=after)
    context = {
        "filters": filters,
        # the same menus as the session list's, so a reviewer picks, never types
        "models": session_filter_options(among)["models"],
        "detectors": sorted(DETECTORS),
        "profiles": profile_names_of(p.pk for p in projects_with_role(request.user, Role.VIEWER)),
        "query": urlencode(filters.as_query()),
        "detection": detection,
        "progress": reviewer_progress(among, filters),
    }
    if detection is not None:
        context.update(
            text=detection_context(detection),
            labels=detection_labels(detection),
            previous=queue_neighbour(among=among, queue=filters, detection_id=detection.pk, forward=False),
            following=queue_neighbour(among=among, queue=filters, detection_id=detection.pk, forward=True),
        )
    return render(request, "review/queue.html", context)


@login_required
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    among = sessions_visible_to(request.user)
    rows = agreement_rows(among)
    context = {
        "rows": rows,
        "any_compared": any(row["compared"] for row in rows),
        "disagreements": disagreements(among),
        "adjudicated_projects": {p.pk for p in projects_with_role(request.user, Role.ADMIN)},
    }
    return render(request, "review/agreement.html", context)


@login_required
@require_POST
def adjudicate(request: HttpRequest) -> HttpResponse:
    session = session_for(request.user, _int_or_zero(request.POST.get("session")), Role.ADMIN)
    try:
        adjudication_set(
            session=session,
            item=request.POST.get("item", ""),
            label=request.POST.get("label"),
            adjudicator=request.user,
        )
    except FieldError as exc:
        return HttpResponse(page_error(exc), status=exc.status)
    return redirect("review:agreement")
