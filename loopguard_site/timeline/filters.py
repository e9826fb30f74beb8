"""The session list's query parameters, read the same way by the home page
and `GET /api/sessions`."""

from __future__ import annotations

from datetime import date

from django.http import QueryDict

from loopguard_site.errors import FieldError
from loopguard_site.replay.selectors import VERDICTS
from loopguard_site.review.selectors import LABEL_FILTERS
from loopguard_site.transcripts.selectors import DEFAULT_SORT, sort_choices

from .selectors import END, Cursor, cursor_from_token

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


def page_cursor(params: QueryDict, name: str, sort: str) -> Cursor | None:
    """The cursor of `?after=` or `?before=` (`name`) as the list's own links
    give it for `sort`; None if absent; a `FieldError` naming it if bad."""
    token = params.get(name, "").strip()
    if not token:
        return None
    try:
        return cursor_from_token(token, sort)
    except ValueError as exc:
        raise FieldError(f"{name} must be a place in the list as its page links give it, not {token!r}", name) from exc


def page_cursors(params: QueryDict, sort: str) -> dict:
    """`session_page`'s `after` and `before` from `?after=&before=` (one of
    them; `before=end` asks for the last page)."""
    if params.get("after", "").strip() and params.get("before", "").strip():
        raise FieldError("before cannot be given with after", "before")
    if params.get("before", "").strip() == END:
        return {"after": None, "before": END}
    return {"after": page_cursor(params, "after", sort), "before": page_cursor(params, "before", sort)}
