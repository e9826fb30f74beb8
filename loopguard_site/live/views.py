from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from loopguard_site.accounts.models import Role
from loopguard_site.timeline.charts import timeline_figure
from loopguard_site.timeline.selectors import session_checkpoint_rows, session_detection_rows, session_streams
from loopguard_site.transcripts.selectors import session_for

from .services import live_session_from_stored


@login_required
def live_session(request: HttpRequest, pk: int) -> HttpResponse:
    """The page of a session that follows it live over `/ws/sessions/<id>`."""
    session = session_for(request.user, pk)
    return render(request, "live/live_session.html", {"session": session})


@login_required
def live_timeline(request: HttpRequest, pk: int) -> JsonResponse:
    """The session page's timeline figure (timeline.charts) of the session so
    far, with its own profile's detections: the live page redraws it as the
    stream grows."""
    session = session_for(request.user, pk)
    detections = session_detection_rows(session_id=pk, profile=session.profile)
    checkpoints = session_checkpoint_rows(session_id=pk, profile=session.profile)
    return JsonResponse(timeline_figure(session_streams(session), detections, checkpoints, axis="offset"))


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Live sessions with their state; the page polls `GET /api/live/sessions`."""
    return render(request, "live/dashboard.html")


@login_required
@require_POST
def stream_stored(request: HttpRequest, pk: int) -> HttpResponse:
    """Stream the stored session `pk` into a new live session (a reviewer's
    right in its project) and open that session's live page."""
    live = live_session_from_stored(source=session_for(request.user, pk, role=Role.REVIEWER), user=request.user)
    return redirect("live:live_session", pk=live.pk)
