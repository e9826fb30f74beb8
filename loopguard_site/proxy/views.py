"""`POST /v1/chat/completions`: an OpenAI-compatible endpoint that guards
the stream against loops (see services.py). The caller authenticates with a
LoopGuard API token as its OpenAI API key; errors come as OpenAI error bodies."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from loopguard_site.accounts.auth import request_token_user

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
        answer = await chat_completion(user=user, request=request_completion(request.body))
    except ProxyError as exc:
        return JsonResponse(error_body(str(exc), exc.kind), status=exc.status)
    if answer.stream is not None:
        response = StreamingHttpResponse(answer.stream, content_type=answer.content_type)
        response["Cache-Control"] = "no-cache"
    else:
        response = HttpResponse(answer.body, status=answer.status, content_type=answer.content_type)
    if answer.session_id is not None:
        response["X-LoopGuard-Session"] = str(answer.session_id)
    return response
