"""The proxies' endpoints: `POST /v1/chat/completions`, `/v1/messages` and
`/v1/responses` guard their API's stream against loops (see services.py).
The caller authenticates with a LoopGuard API token as its API key (the
session goes into the token's project, and the call counts against the
token's daily quota, as an API call does); errors come as the API's own
error bodies."""

from __future__ import annotations

from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from loopguard_site.accounts.access import project_for
from loopguard_site.accounts.auth import bearer_token, token_counter_key
from loopguard_site.accounts.models import Role
from loopguard_site.accounts.quota import QUOTA_USED_UP, token_quota_take
from loopguard_site.accounts.selectors import api_token_user
from loopguard_site.errors import FieldError

from .chat_completions import ChatCompletions
from .messages import Messages
from .responses import Responses
from .services import ProxyApi, ProxyError, proxy_call, request_json


def request_token(request: HttpRequest, api: ProxyApi) -> str | None:
    """The LoopGuard token the client sent as its API key, where its SDK puts it."""
    for header in api.key_headers:
        value = request.headers.get(header)
        token = bearer_token(value) if header == "Authorization" else (value or "").strip()
        if token:
            return token
    return None


def _token_user(token: str | None):
    user = api_token_user(token) if token else None
    if user is None:
        raise ProxyError(
            "authentication required: use a LoopGuard API token as the API key", status=401, kind="auth_error"
        )
    retry_after = token_quota_take(token_key=token_counter_key(token), now=timezone.now())
    if retry_after is not None:
        raise ProxyError(QUOTA_USED_UP, status=429, kind="rate_limit_error", retry_after=retry_after)
    try:
        return user, project_for(user, None, Role.REVIEWER)
    except FieldError as exc:
        raise ProxyError(str(exc), status=exc.status, kind="permission_error") from exc


def proxy_view(api: ProxyApi) -> Callable:
    @csrf_exempt  # a token, not a browser session
    async def view(request: HttpRequest) -> HttpResponse:
        try:
            if request.method != "POST":
                raise ProxyError(f"method {request.method} is not allowed here", status=405)
            user, project = await sync_to_async(_token_user)(request_token(request, api))
            answer = await proxy_call(
                api, user=user, project=project, request=request_json(request.body), client_headers=request.headers
            )
        except ProxyError as exc:
            response = JsonResponse(api.error_body(str(exc), exc.kind), status=exc.status)
            if exc.retry_after is not None:
                response["Retry-After"] = str(exc.retry_after)
            return response
        if answer.stream is not None:
            response = StreamingHttpResponse(answer.stream, content_type=answer.content_type)
            response["Cache-Control"] = "no-cache"
        else:
            response = HttpResponse(answer.body, status=answer.status, content_type=answer.content_type)
        if answer.session_id is not None:
            response["X-LoopGuard-Session"] = str(answer.session_id)
        return response

    return view


chat_completions = proxy_view(ChatCompletions())
messages = proxy_view(Messages())
responses = proxy_view(Responses())
