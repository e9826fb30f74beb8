"""The session list's query parameters, read the same way by the home page
and `GET /api/sessions`."""

from __future__ import annotations

from datetime import date

from django.http import QueryDict

from loopguard_site.errors import FieldError
from loopguard_site.replay.selectors import VERDICTS
from loopguard_site.review.selectors import LABEL_FILTERS
from loopguard_site.transcripts.selectors import DEFAULT_SORT, sort_choices

_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


def session_filters(params: QueryDict) -> dict:
    """`session_list` keyword arguments from `?project=&model=&format=&tag=
    &state=&has_detections=&q=&sort=&profile=&verdict=&detector=&type=
    &label=&created=&live=`; a `FieldError` naming a bad parameter."""
    project = params.get("project", "").strip()
    if project and not project.isdigit():
        raise FieldError(f"project must be a project id, not {project!r}", "project")
    flag = params.get("has_detections", "").strip().lower()
    if flag and flag not in _TRUE | _FALSE:
        raise FieldError(f"has_detections must be true or false, not {flag!r}", "has_detections")
    sort = params.get("sort", "").strip() or DEFAULT_SORT
    if sort not in sort_choices():
        raise FieldError(f"sort must be one of {', '.join(sort_choices())}, not {sort!r}", "sort")
    verdict = params.get("verdict", "").strip()
    if verdict and verdict not in VERDICTS:
        raise FieldError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}", "verdict")
    label = params.get("label", "").strip()
    if label and label not in LABEL_FILTERS:
        raise FieldError(f"label must be one of {', '.join(LABEL_FILTERS)}, not {label!r}", "label")
    created = params.get("created", "").strip()
    try:
        day = date.fromisoformat(created) if created else None
    except ValueError:
        day = None
    if created and (day is None or len(created) != len("YYYY-MM-DD")):
        raise FieldError(f"created must be a day as YYYY-MM-DD, not {created!r}", "created")
    live = params.get("live", "").strip().lower()
    if live and live not in _TRUE | _FALSE:
        raise FieldError(f"live must be 1 or 0, not {live!r}", "live")
    return {
        "project": int(project) if project else None,
        "model": params.get("model", "").strip(),
        "source_format": params.get("format", "").strip(),
        "tag": params.get("tag", "").strip(),
        "state": params.get("state", "").strip(),
        "has_detections": (flag in _TRUE) if flag else None,
        "q": params.get("q", "").strip(),
        "sort": sort,
        "profile": params.get("profile", "").strip(),
        "verdict": verdict,
        "detector": params.get("detector", "").strip(),
        "detection_type": params.get("type", "").strip(),
        "label": label,
        "created": day,
        "live": live in _TRUE,
    }
