from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from .selectors import live_session_get


@login_required
def live_session(request: HttpRequest, pk: int) -> HttpResponse:
    """The page of a session that follows it live over `/ws/sessions/<id>`."""
    session = live_session_get(pk)
    if session is None:
        raise Http404(f"no session {pk}")
    return render(request, "live/live_session.html", {"session": session})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Live sessions with their state; the page polls `GET /api/live/sessions`."""
    return render(request, "live/dashboard.html")
