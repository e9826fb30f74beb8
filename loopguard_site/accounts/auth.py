"""Where a request carries its API token: `Authorization: Bearer <token>`
(HTTP and WebSocket) or, for WebSockets, `?token=` (api.md)."""

from __future__ import annotations

from urllib.parse import parse_qs

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest

from .selectors import api_token_user
from .tokens import token_hash


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization` header value, if it is a bearer one."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def request_token_user(request: HttpRequest) -> AbstractBaseUser | None:
    """The user an HTTP request's bearer token belongs to, else None."""
    token = bearer_token(request.headers.get("Authorization"))
    return api_token_user(token) if token else None


def request_token_key(request: HttpRequest) -> str:
    """A name for the bearer token of a request that carries one (for
    counters): part of its hash, never the token itself."""
    return token_counter_key(bearer_token(request.headers.get("Authorization")) or "")


def token_counter_key(token: str) -> str:
    """A name for an API token in counters: part of its hash, never the token itself."""
    return token_hash(token)[:32]


def scope_token(scope: dict) -> str | None:
    """The API token of an ASGI WebSocket scope: header first, then `?token=`."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return bearer_token(value.decode("latin-1"))
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else None
