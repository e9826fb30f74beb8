"""ASGI middleware for WebSockets: token authentication and the origin check."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator
from django.conf import settings

from .auth import scope_token
from .selectors import api_token_user


class ApiTokenAuthMiddleware:
    """Sets `scope["user"]` from an API token when the connection carries one;
    otherwise the login session's user (AuthMiddlewareStack) stays."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        token = scope_token(scope)
        if token is not None:
            user = await database_sync_to_async(api_token_user)(token)
            if user is not None:
                scope = {**scope, "user": user}
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
