"""`POST /api/sessions/<id>/events` (api.md, "Live ingest") and the
dashboard's rows. The events URL is shared with the transcripts app's GET
(the session's stored events): `session_events` sends each method to its view."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from loopguard_site.api import api_view, json_body
from loopguard_site.transcripts.api_views import session_events_list
from loopguard_site.transcripts.selectors import sessions_visible_to

from .protocol import parse_message
from .selectors import dashboard_rows, session_to_ingest
from .services import live_ingest, live_session_close


@csrf_exempt  # each view it calls does its own CSRF check
def session_events(request: HttpRequest, pk: int) -> HttpResponse:
    if request.method == "POST":
        return session_events_post(request, pk)
    return session_events_list(request, pk)


@api_view(methods=("POST",))
def session_events_post(request: HttpRequest, pk: int) -> JsonResponse:
    """`{"seq": N, "events": [...]}` -> `{"ack": N, "detections": [...], "state"}`;
    `{"close": true}` -> `{"ack": LAST_ACKED, "detections": [], "state": "closed"}`."""
    session_to_ingest(request.user, pk)
    message = parse_message(json_body(request))
    if message.seq is None:
        result = live_session_close(session_id=pk)
    else:
        result = live_ingest(
            session_id=pk, seq=message.seq, events=message.events, close=message.close, texts=message.texts
        )
    return JsonResponse({"ack": result.ack, "detections": result.detections, "state": result.state})


@api_view()
def live_sessions(request: HttpRequest) -> JsonResponse:
    """`GET /api/live/sessions`: the dashboard's rows, newest first."""
    return JsonResponse({"results": dashboard_rows(sessions_visible_to(request.user))})
