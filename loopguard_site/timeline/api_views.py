"""The session list's API: `GET /api/sessions` (and the same URL's upload,
transcripts' `POST`) and `GET /api/sessions/<id>`, each session with its
verdicts."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from loopguard_site.api import api_view
from loopguard_site.replay.models import SessionVerdict
from loopguard_site.transcripts.api_views import session_summary, sessions_create
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_for, sessions_visible_to

from .filters import page_cursor, session_filters
from .selectors import PAGE_SIZE, session_list, session_page


def session_detail_dict(session: Session) -> dict:
    """A session as `GET /api/sessions[/<id>]` answers it: with `profile`
    (the one it is scanned with) and the verdict of each profile it was
    scanned or replayed with, by profile name."""
    return {
        **session_summary(session),
        "state": session.state,
        "created": session.created.isoformat(),
        "parser_version": session.parser_version,
        "tags": session.tag_names(),
        "profile": session.profile,
        "verdicts": [verdict_dict(v) for v in sorted(session.verdicts.all(), key=lambda v: v.profile)],
    }


def verdict_dict(verdict: SessionVerdict) -> dict:
    first = None
    if verdict.looped:
        first = {
            "id": verdict.first_detection_id,
            "detector": verdict.first_detection_detector,
            "type": verdict.first_detection_type,
            "channel": verdict.first_detection_channel,
            "start": verdict.first_detection_start,
            "at": verdict.first_detection_at,
        }
    return {
        "profile": verdict.profile,
        "verdict": "loop" if verdict.looped else "clean",
        "detections": verdict.detection_count,
        "first_detection": first,
    }


@api_view(methods=("GET", "POST"))
def sessions(request: HttpRequest) -> HttpResponse:
    return sessions_create(request) if request.method == "POST" else sessions_list(request)


def sessions_list(request: HttpRequest) -> JsonResponse:
    filters = session_filters(request.GET)
    after = page_cursor(request.GET, "after", filters["sort"])
    sessions = session_list(among=sessions_visible_to(request.user), **filters)
    page = session_page(sessions, sort=filters["sort"], size=PAGE_SIZE, after=after, total=False)
    next_url = None
    if page.next is not None:
        query = request.GET.copy()
        query["after"] = page.next.token()
        next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return JsonResponse({"results": [session_detail_dict(s) for s in page.sessions], "next": next_url})


@api_view()
def session_detail(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(session_detail_dict(session_for(request.user, pk)))
