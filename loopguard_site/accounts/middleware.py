"""ASGI middleware for WebSockets: token authentication, the origin check
and the message size limit."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings

from .auth import scope_token, token_counter_key
from .selectors import api_token_user


class ApiTokenAuthMiddleware:
    """Sets `scope["user"]` from an API token when the connection carries one,
    and `scope["api_token_key"]` (`token_counter_key`: what the token's daily
    quota is counted under); otherwise (no token, or none that is live) the
    login session's user (channels' AuthMiddlewareStack), with no
    `api_token_key`. A token's socket skips the session stack: its session
    and user lookups cost a hop to the shared database thread each, a good
    part of a producer's connect when many connect at once."""

    def __init__(self, inner):
        self.inner = inner
        self.session_auth = AuthMiddlewareStack(inner)

    async def __call__(self, scope, receive, send):
        token = scope_token(scope)
        if token is not None:
            user = await database_sync_to_async(api_token_user)(token)
            if user is not None:
                return await self.inner(
                    {**scope, "user": user, "api_token_key": token_counter_key(token)}, receive, send
                )
        return await self.session_auth(scope, receive, send)


_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def _host_port(netloc: str, scheme: str) -> tuple[str, int | None]:
    """(host in lower case, port, the scheme's default when absent) of `host[:port]`."""
    parsed = urlsplit(f"//{netloc}")
    try:
        port = parsed.port
    except ValueError:
        return "", None
    return (parsed.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


class BrowserOriginValidator(OriginValidator):
    """Refuses cross-site browser connections: an `Origin` must be the page's
    own, the host *and* port the socket connects to (the `Host` header, itself
    one of ALLOWED_HOSTS), or one of CSRF_TRUSTED_ORIGINS (a proxy that
    rewrites `Host`). Another port of the same host is another site (another
    app there could borrow the session cookie). Unlike channels'
    `AllowedHostsOriginValidator`, it lets in clients that send no `Origin`
    at all: producers and SDK clients are not browsers and authenticate with
    a token, which a hostile page cannot borrow."""

    def __init__(self, application):
        super().__init__(application, settings.ALLOWED_HOSTS)

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers", []))
        origin = headers.get(b"origin")
        if origin is None or self.same_site(origin.decode("latin1"), headers, scope.get("scheme", "ws")):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)

    def same_site(self, origin: str, headers: dict, scheme: str) -> bool:
        if origin in settings.CSRF_TRUSTED_ORIGINS:
            return True
        parsed = urlsplit(origin)
        if not self.validate_origin(parsed):  # its host is one of ALLOWED_HOSTS
            return False
        target = _host_port(headers.get(b"host", b"").decode("latin1"), scheme)
        return target[0] != "" and _host_port(parsed.netloc, parsed.scheme) == target


class MessageSizeLimit:
    """Closes a socket (code 1009, "message too big") whose client sends a
    message over LOOPGUARD_WS_MAX_MESSAGE_BYTES, after one `{"error": ...}`
    message saying so; the consumer never sees the message, only the
    disconnect. One place for every socket, consumers stay unaware."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        limit = settings.LOOPGUARD_WS_MAX_MESSAGE_BYTES

        async def limited_receive():
            message = await receive()
            if message["type"] == "websocket.receive":
                size = len(message.get("bytes") or b"") + len((message.get("text") or "").encode())
                if size > limit:
                    error = f"message of {size} bytes, over the limit of {limit} bytes (LOOPGUARD_WS_MAX_MESSAGE_KB)"
                    answer = {"error": error, "field": None, "seq": None, "limit": limit}
                    await send({"type": "websocket.send", "text": json.dumps(answer)})
                    await send({"type": "websocket.close", "code": 1009})
                    return {"type": "websocket.disconnect", "code": 1009}
            return message

        return await self.inner(scope, limited_receive, send)
