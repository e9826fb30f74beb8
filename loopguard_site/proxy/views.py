"""`POST /v1/chat/completions`: an OpenAI-compatible endpoint that guards
the stream against loops (see services.py). The caller authenticates with a
LoopGuard API token as its OpenAI API key (the session goes into the token's
project, and the call counts against the token's daily quota, as an API call
does); errors come as OpenAI error bodies."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from loopguard_site.accounts.access import ProjectChoiceError, project_for
from loopguard_site.accounts.auth import request_token_user
from loopguard_site.accounts.models import Role
from loopguard_site.accounts.quota import QUOTA_USED_UP, request_quota_take

from .services import ProxyError, chat_completion, error_body, request_completion


@csrf_exempt  # a bearer token, not a browser session
async def chat_completions(request: HttpRequest) -> HttpResponse:
    try:
        if request.method != "POST":
            raise ProxyError(f"method {request.method} is not allowed here", status=405)
        user = await sync_to_async(request_token_user)(request)
        if user is None:
            raise ProxyError(
                "authentication required: use a LoopGuard API token as the API key", status=401, kind="auth_error"
            )
        retry_after = await sync_to_async(request_quota_take)(request)
        if retry_after is not None:
            raise ProxyError(QUOTA_USED_UP, status=429, kind="rate_limit_error", retry_after=retry_after)
        try:
            project = await sync_to_async(project_for)(user, None, Role.REVIEWER)
        except ProjectChoiceError as exc:
            raise ProxyError(str(exc), status=exc.status, kind="permission_error") from exc
        answer = await chat_completion(user=user, project=project, request=request_completion(request.body))
    except ProxyError as exc:
        response = JsonResponse(error_body(str(exc), exc.kind), status=exc.status)
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
