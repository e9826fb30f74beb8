"""A lost database connection fails the request it broke, cleanly: a 503
JSON error (the API's error body) instead of a 500 traceback, and the broken
connection is closed at once so the next request opens a fresh one.

PostgreSQL restarting, a failover or an idle connection killed by a proxy
all look the same from here: `OperationalError` or `InterfaceError` from the
driver, wrapped by Django."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 1


class DatabaseUnavailableMiddleware(MiddlewareMixin):  # sync and async: async views stay on the event loop
    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        logger.warning("database unavailable for %s %s: %s", request.method, request.path, exception)
        for connection in connections.all(initialized_only=True):
            # the server side is gone: drop it now rather than at the request's end
            connection.close_if_unusable_or_obsolete()
        response = JsonResponse(
            {"error": "the database is unavailable; try again", "field": None, "line": None}, status=503
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
