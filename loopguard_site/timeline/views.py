"""The session page, and the windows of text or tool calls it loads on demand."""

from __future__ import annotations

import math

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from detector import TEXT_CHANNELS
from loopguard_site.transcripts.selectors import session_for

from .charts import AXES, clickable_detections, timeline_figure
from .page import detection_targets, session_page_parts
from .panels import text_window, tool_window
from .selectors import session_checkpoint_rows, session_detection_rows, session_profiles, session_streams


@login_required
@require_GET
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = session_for(request.user, pk)
    profiles = session_profiles(pk)
    profile = request.GET.get("profile") or (profiles[0] if profiles else "")
    parts = session_page_parts(
        session_streams(session),
        session_detection_rows(session_id=pk, profile=profile),
        session_checkpoint_rows(session_id=pk, profile=profile),
    )
    context = {"session": session, "profiles": profiles, "profile": profile, **parts}
    return render(request, "timeline/session_detail.html", context)


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
    streams = session_streams(session, channel=channel)
    if channel == "tools":
        return JsonResponse(tool_window(streams.tool_calls, detections, bounds["start"], bounds["end"]))
    return JsonResponse(text_window(streams.texts[channel], detections, bounds["start"], bounds["end"]))


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
    figure = timeline_figure(session_streams(session), detections, checkpoints, axis=axis, x_range=x_range)
    return JsonResponse({"figure": figure, "targets": detection_targets(detections, clickable_detections(figure))})
