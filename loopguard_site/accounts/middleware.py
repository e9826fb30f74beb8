"""ASGI middleware for WebSockets: token authentication, the origin check
and the message size limit."""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator
from django.conf import settings

from .auth import scope_token, token_counter_key
from .selectors import api_token_user


class ApiTokenAuthMiddleware:
    """Sets `scope["user"]` from an API token when the connection carries one,
    and `scope["api_token_key"]` (`token_counter_key`: what the token's daily
    quota is counted under); otherwise the login session's user
    (AuthMiddlewareStack) stays, with no `api_token_key`."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        token = scope_token(scope)
        if token is not None:
            user = await database_sync_to_async(api_token_user)(token)
            if user is not None:
                scope = {**scope, "user": user, "api_token_key": token_counter_key(token)}
        return await self.inner(scope, receive, send)


class BrowserOriginValidator(OriginValidator):
    """Refuses cross-site browser connections (an `Origin` that is not one of
    ALLOWED_HOSTS) but, unlike channels' `AllowedHostsOriginValidator`, lets
    in clients that send no `Origin` at all: producers and SDK clients are not
    browsers and authenticate with a token, which a hostile page cannot borrow."""

    def __init__(self, application):
        super().__init__(application, settings.ALLOWED_HOSTS)

    def valid_origin(self, parsed_origin) -> bool:
        return parsed_origin is None or self.validate_origin(parsed_origin)


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
                    await send({"type": "websocket.send", "text": json.dumps({"error": error})})
                    await send({"type": "websocket.close", "code": 1009})
                    return {"type": "websocket.disconnect", "code": 1009}
            return message

        return await self.inner(scope, limited_receive, send)
