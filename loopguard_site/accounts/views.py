"""The API token page: a user's tokens, a new one (its plaintext shown on
this one answer only), and revocation."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from .selectors import api_token_of_user, api_tokens_of_user
from .services import api_token_create, api_token_revoke

NAME_MAX = 100


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    context = {"created": None, "plaintext": None, "error": None}
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name or len(name) > NAME_MAX:
            context["error"] = f"give the token a name of 1 to {NAME_MAX} characters"
        else:
            context["created"], context["plaintext"] = api_token_create(user=request.user, name=name)
    context["tokens"] = api_tokens_of_user(request.user)
    return render(request, "accounts/tokens.html", context, status=400 if context["error"] else 200)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = api_token_of_user(request.user, token_id)
    if token is None:
        raise Http404(f"no token {token_id} of yours")
    api_token_revoke(token=token)
    return redirect("accounts:tokens")
