"""The review pages: the queue (one detection at a time, keyboard driven)
and agreement with its disagreements."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session

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
from .services import LabelError, adjudication_set


def _int_or_zero(raw: str | None) -> int:
    return int(raw) if raw and raw.isdigit() else 0


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    filters = QueueFilter(*(request.GET.get(key, "").strip() for key in ("model", "detector", "profile")))
    chosen = _int_or_zero(request.GET.get("detection"))
    if chosen:
        detection = Detection.objects.select_related("session").filter(pk=chosen).first()
        if detection is None:
            raise Http404(f"no detection with id {chosen}")
    else:
        detection = queue_next(reviewer=request.user, queue=filters, after=_int_or_zero(request.GET.get("after")))
    context = {
        "filters": filters,
        "query": urlencode(filters.as_query()),
        "detection": detection,
        "progress": reviewer_progress(filters),
    }
    if detection is not None:
        context.update(
            text=detection_context(detection),
            labels=detection_labels(detection),
            previous=queue_neighbour(queue=filters, detection_id=detection.pk, forward=False),
            following=queue_neighbour(queue=filters, detection_id=detection.pk, forward=True),
        )
    return render(request, "review/queue.html", context)


@login_required
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    return render(request, "review/agreement.html", {"rows": agreement_rows(), "disagreements": disagreements()})


@login_required
@require_POST
def adjudicate(request: HttpRequest) -> HttpResponse:
    session = Session.objects.filter(pk=_int_or_zero(request.POST.get("session"))).first()
    if session is None:
        raise Http404("no such session")
    try:
        adjudication_set(
            session=session,
            item=request.POST.get("item", ""),
            label=request.POST.get("label"),
            adjudicator=request.user,
        )
    except PermissionError:
        return HttpResponse("only an admin can adjudicate", status=403)
    except LabelError as exc:
        return HttpResponse(str(exc), status=400)
    return redirect("review:agreement")
