"""The JSON API's edge, shared by every app (docs/api.md).

`api_view` authenticates (a bearer token, within its daily quota, or the
browser's login session with CSRF on unsafe methods), checks the method, and
turns the `FieldError` any service raises into the contract's error body
`{"error", "field", "line"}` with its 4xx status, as it does accounts.access's
refusals (404 for what is not the caller's, 403 for a role too low). Views
stay a few lines: parse, call a service or selector, return `JsonResponse`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from detector.json_depth import json_depth_problem
from loopguard_site.accounts.auth import request_token_user
from loopguard_site.accounts.quota import QUOTA_USED_UP, request_quota_take
from loopguard_site.errors import FieldError
from loopguard_site.storable import unstorable_value


def error_response(
    message: str, status: int = 400, *, field: str | None = None, line: int | None = None
) -> JsonResponse:
    return JsonResponse({"error": message, "field": field, "line": line}, status=status)


def _csrf_failure(request: HttpRequest) -> HttpResponse | None:
    # The browser's session needs a CSRF token on unsafe methods; a bearer
    # token cannot be borrowed by a hostile page, so token calls skip it.
    return CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})


def api_view(methods: tuple[str, ...] = ("GET",)) -> Callable:
    """Decorate a view `(request, *args) -> HttpResponse` of the JSON API."""

    def decorate(view: Callable) -> Callable:
        @csrf_exempt
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            # who asks comes first: an anonymous client learns nothing, not even the methods
            token_user = request_token_user(request)
            if token_user is not None:
                request.user = token_user
                retry_after = request_quota_take(request)
                if retry_after is not None:
                    response = error_response(QUOTA_USED_UP, 429)
                    response["Retry-After"] = str(retry_after)
                    return response
            elif not request.user.is_authenticated:
                return error_response("authentication required: send 'Authorization: Bearer <token>'", 401)
            if request.method not in methods:
                return error_response(f"method {request.method} is not allowed here", 405)
            if token_user is None and request.method not in ("GET", "HEAD", "OPTIONS"):
                failure = _csrf_failure(request)
                if failure is not None:
                    return error_response("CSRF check failed", 403)
            try:
                return view(request, *args, **kwargs)
            except FieldError as exc:
                response = error_response(str(exc), exc.status, field=exc.field, line=exc.line)
                if exc.retry_after is not None:
                    response["Retry-After"] = str(exc.retry_after)
                return response
            except Http404 as exc:
                return error_response(str(exc), 404)
            except PermissionDenied as exc:
                return error_response(str(exc), 403)

        return wrapper

    return decorate


def json_body(request: HttpRequest) -> dict:
    """The request body as a JSON object, or a FieldError saying what is wrong
    (nesting past LOOPGUARD_MAX_JSON_DEPTH is refused before it is parsed)."""
    body = request.body or b"{}"
    if problem := json_depth_problem(body, settings.LOOPGUARD_MAX_JSON_DEPTH):
        raise FieldError(f"{problem} (LOOPGUARD_MAX_JSON_DEPTH)", field=problem.path or None, line=problem.line)
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise FieldError(f"the body is not valid JSON: {exc}", line=line) from exc
    if not isinstance(data, dict):
        raise FieldError("the body must be a JSON object")
    if problem := unstorable_value(data):
        field, what = problem
        raise FieldError(f"{field} holds {what}", field=field)
    return data


def int_param(
    request: HttpRequest, name: str, default: int | None = None, *, low: int = 0, high: int | None = None
) -> int | None:
    """An integer query parameter, checked, or a FieldError naming it."""
    raw = request.GET.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise FieldError(f"{name} must be a whole number, not {raw!r}", field=name) from exc
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise FieldError(f"{name} must be {bounds}", field=name)
    return value
