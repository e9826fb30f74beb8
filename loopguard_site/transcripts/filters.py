"""The session list's query parameters, read the same way by the home page
and `GET /api/sessions`."""

from __future__ import annotations

from django.http import QueryDict

from .selectors import DEFAULT_SORT, sort_choices

_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


class FilterError(ValueError):
    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def session_filters(params: QueryDict) -> dict:
    """`session_list` keyword arguments from `?project=&model=&format=&tag=
    &state=&has_detections=&q=&sort=`; a `FilterError` naming a bad parameter."""
    project = params.get("project", "").strip()
    if project and not project.isdigit():
        raise FilterError(f"project must be a project id, not {project!r}", "project")
    flag = params.get("has_detections", "").strip().lower()
    if flag and flag not in _TRUE | _FALSE:
        raise FilterError(f"has_detections must be true or false, not {flag!r}", "has_detections")
    sort = params.get("sort", "").strip() or DEFAULT_SORT
    if sort not in sort_choices():
        raise FilterError(f"sort must be one of {', '.join(sort_choices())}, not {sort!r}", "sort")
    return {
        "project": int(project) if project else None,
        "model": params.get("model", "").strip(),
        "source_format": params.get("format", "").strip(),
        "tag": params.get("tag", "").strip(),
        "state": params.get("state", "").strip(),
        "has_detections": (flag in _TRUE) if flag else None,
        "q": params.get("q", "").strip(),
        "sort": sort,
    }
