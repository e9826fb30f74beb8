"""The Content-Security-Policy header on every response.

Transcripts are untrusted text: templates escape them, and this policy is the
second wall should an escape ever be missed. Scripts come from the lab's own
static files only (no inline code, no eval); data for the page scripts travels
in `json_script` blocks, which are JSON, not code. Plotly sets inline style
attributes on the SVG it draws, hence `'unsafe-inline'` for styles only.
WebSockets to the same host match `connect-src 'self'` (CSP level 3)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware(MiddlewareMixin):
    # MiddlewareMixin: sync and async alike, so async views (the proxy's
    # stream) keep running on the event loop

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
