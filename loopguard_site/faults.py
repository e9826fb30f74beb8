"""Faults answered at the edge, each with the API's error body
`{"error", "field", "line"}` instead of a 500 traceback:

- a lost database connection fails the request it broke with a 503 (and
  the broken connection is closed at once so the next request opens a
  fresh one). PostgreSQL restarting, a failover or an idle connection
  killed by a proxy all look the same from here: `OperationalError` or
  `InterfaceError` from the driver, wrapped by Django;
- Redis unreachable (the broker, the channel layer) likewise: 503 with
  Retry-After (the daily quota does not need it: it fails open, accounts.quota);
- a NUL character or an unpaired surrogate in a query or form field (name
  or value), which no database column can store: 400 naming the field.
  JSON bodies are checked where they are parsed (`api.json_body`)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from loopguard_site.storable import unstorable_value

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 1
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
RAW_BODIES = ("/api/", "/v1/")  # JSON or transcripts, never parsed as forms


def _unavailable(what: str) -> JsonResponse:
    response = JsonResponse({"error": f"{what} is unavailable; try again", "field": None, "line": None}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class RedisUnavailableMiddleware(MiddlewareMixin):
    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, (RedisConnectionError, RedisTimeoutError, BrokerError)):
            return None
        logger.warning("Redis unavailable for %s %s: %s", request.method, request.path, exception)
        return _unavailable("Redis (the broker and channel layer)")


class UnstorableInputMiddleware:
    """400 for a query or form field holding what no column can store. The
    API's bodies are not read here: they are JSON (`api.json_body` checks
    them) or raw transcripts, never forms, whatever their content type says."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        fields = [request.GET]
        if request.method == "POST" and request.content_type in FORM_TYPES and not request.path.startswith(RAW_BODIES):
            fields.append(request.POST)
        for query in fields:
            if problem := unstorable_value({key: query.getlist(key) for key in query}):
                field, what = problem
                field = field.split("[", 1)[0]  # the field's name, not its n-th value
                return JsonResponse({"error": f"{field} holds {what}", "field": field, "line": None}, status=400)
        return self.get_response(request)


class DatabaseUnavailableMiddleware(MiddlewareMixin):  # sync and async: async views stay on the event loop
    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        logger.warning("database unavailable for %s %s: %s", request.method, request.path, exception)
        for connection in connections.all(initialized_only=True):
            # the server side is gone: drop it now rather than at the request's end
            connection.close_if_unusable_or_obsolete()
        return _unavailable("the database")
