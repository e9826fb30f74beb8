"""The session list, the session page, and the windows of text or tool calls
it loads on demand."""

from __future__ import annotations

import math

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET

from detector import TEXT_CHANNELS
from detector.registry import DETECTORS
from loopguard_site.accounts.access import projects_with_role
from loopguard_site.accounts.models import Role
from loopguard_site.errors import FieldError, page_error
from loopguard_site.replay.selectors import VERDICTS, profile_names_of
from loopguard_site.review.selectors import LABEL_FILTERS, detection_item_of, reviewer_labels
from loopguard_site.review.truth import SESSION_ITEM
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import (
    DEFAULT_SORT,
    session_filter_options,
    session_for,
    sessions_visible_to,
    sort_choices,
)

from .charts import AXES
from .conversation import CONTEXT_ITEMS, PAGE_ITEMS
from .filters import page_cursors, session_filters
from .selectors import (
    END,
    PAGE_SIZE,
    session_checkpoint_rows,
    session_detection_rows,
    session_page,
    session_profiles,
    session_row,
)
from .selectors import session_list as select_sessions
from .sources import page_source


@login_required
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    error = None
    try:
        filters = session_filters(request.GET)
        cursors = page_cursors(request.GET, filters["sort"])
    except FieldError as exc:
        error = page_error(exc)
        filters, cursors = session_filters({}), {}
    visible = sessions_visible_to(request.user)
    sessions = select_sessions(among=visible, **filters)
    page = session_page(sessions, sort=filters["sort"], size=PAGE_SIZE, **cursors)
    query = request.GET.copy()
    for name in ("after", "before"):
        query.pop(name, None)
    projects = projects_with_role(request.user, Role.VIEWER)
    context = {
        "page": page,
        "rows": [session_row(session, filters["profile"]) for session in page.sessions],
        "last_page": END,
        "filters": filters,
        "filter_error": error,
        "options": session_filter_options(visible),
        "projects": projects,
        "profiles": profile_names_of(p.pk for p in projects),
        "detectors": sorted(DETECTORS),
        "verdicts": VERDICTS,
        "label_filters": LABEL_FILTERS,
        "states": Session.State.values,
        "sorts": sort_choices(),
        "default_sort": DEFAULT_SORT,
        "query": query.urlencode(),  # the filters, for the pager's links
    }
    return render(request, "timeline/session_list.html", context)


@login_required
@require_GET
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = session_for(request.user, pk)
    profiles = session_profiles(pk)
    # By default the session's own scan profile (the one its model selects).
    own = session.profile if session.profile in profiles else (profiles[0] if profiles else "")
    profile = request.GET.get("profile") or own
    detections = session_detection_rows(session_id=pk, profile=profile)
    checkpoints = session_checkpoint_rows(session_id=pk, profile=profile)
    parts = page_source(session).page_parts(detections, checkpoints)
    mine = reviewer_labels(session_id=pk, reviewer=request.user)
    for group in parts["groups"]:
        # The reviewer's label of the group: the one they gave every detection of it, if any.
        given = {mine.get(detection_item_of(d)) for d in group["members"]}
        group["my_label"] = given.pop() if len(given) == 1 else ""
    context = {
        "session": session,
        "profiles": profiles,
        "profile": profile,
        "my_session_label": mine.get(SESSION_ITEM, ""),
        **parts,
    }
    return render(request, "timeline/session_detail.html", context)


@login_required
@require_GET
def session_items(request: HttpRequest, pk: int) -> JsonResponse:
    """`?start=N&end=N&profile=NAME`: items [start, end) of the conversation
    (at most a page), or `?channel=C&offset=N`: the items around the one
    holding that channel offset (tool-call index on `tools`); as HTML the
    page inserts (rendered by the same template as the page, so escaped)."""
    source = page_source(session_for(request.user, pk))
    channel = request.GET.get("channel", "")
    if channel:
        offset = request.GET.get("offset", "")
        if channel not in (*TEXT_CHANNELS, "tools") or not offset.isdigit():
            return JsonResponse(
                {"error": "channel must be reasoning, content or tools", "field": "channel"}, status=400
            )
        found = source.item_of(channel, int(offset))
        if found is None:
            return JsonResponse({"error": f"the session has no {channel}", "field": "channel"}, status=400)
        start, end = max(found - CONTEXT_ITEMS, 0), found + CONTEXT_ITEMS + 1
    else:
        values = [request.GET.get(field, "") for field in ("start", "end")]
        if not all(value.isdigit() for value in values):
            return JsonResponse({"error": "start and end must be whole numbers", "field": "start"}, status=400)
        start, end = int(values[0]), int(values[1])
    detections = session_detection_rows(session_id=pk, profile=request.GET.get("profile", ""))
    start, end, items = source.items(detections, start, min(end, start + PAGE_ITEMS))
    html = render_to_string("timeline/_items.html", {"items": items})
    return JsonResponse({"start": start, "end": end, "html": html})


@login_required
@require_GET
def session_window(request: HttpRequest, pk: int) -> JsonResponse:
    """`?channel=reasoning|content|tools&start=N&end=N&profile=NAME`: one
    window (at most a page) of text with its highlights, or of tool calls."""
    session = session_for(request.user, pk)
    channel = request.GET.get("channel", "")
    if channel not in (*TEXT_CHANNELS, "tools"):
        return JsonResponse({"error": "channel must be reasoning, content or tools", "field": "channel"}, status=400)
    bounds = {}
    for field in ("start", "end"):
        value = request.GET.get(field, "")
        if not value.isdigit():
            return JsonResponse({"error": f"{field} must be a whole number", "field": field}, status=400)
        bounds[field] = int(value)
    detections = session_detection_rows(
        session_id=pk, profile=request.GET.get("profile", ""), channel=channel, start=bounds["start"], end=bounds["end"]
    )
    return JsonResponse(page_source(session).window(channel, detections, bounds["start"], bounds["end"]))


@login_required
@require_GET
def session_figure(request: HttpRequest, pk: int) -> JsonResponse:
    """`?axis=offset|time&x0=X&x1=X&profile=NAME`: the timeline of [x0, x1]
    (a zoom) in full detail, and the targets of the detections it shows."""
    session = session_for(request.user, pk)
    axis = request.GET.get("axis", "offset")
    if axis not in AXES:
        return JsonResponse({"error": f"axis must be one of {', '.join(AXES)}", "field": "axis"}, status=400)
    try:
        x_range = (float(request.GET.get("x0", "")), float(request.GET.get("x1", "")))
    except ValueError:
        x_range = (math.nan, math.nan)
    if not all(map(math.isfinite, x_range)) or x_range[0] >= x_range[1]:
        return JsonResponse({"error": "x0 and x1 must be numbers, x0 below x1", "field": "x0"}, status=400)
    profile = request.GET.get("profile", "")
    detections = session_detection_rows(session_id=pk, profile=profile)
    checkpoints = session_checkpoint_rows(session_id=pk, profile=profile)
    return JsonResponse(page_source(session).zoom(detections, checkpoints, axis=axis, x_range=x_range))
