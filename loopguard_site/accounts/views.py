"""The API token page: the tokens of the projects the user administers, a
new one (its plaintext shown on this one answer only), and revocation."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from .access import ProjectChoiceError, object_for, project_for, projects_with_role
from .models import ApiToken, Role
from .selectors import api_tokens_managed_by
from .services import api_token_create, api_token_revoke

NAME_MAX = 100


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    context = {"created": None, "plaintext": None, "error": None, "values": request.POST}
    status = 200
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        try:
            project = project_for(request.user, request.POST.get("project"), Role.ADMIN)
        except ProjectChoiceError as exc:
            if exc.status == 403:
                raise PermissionDenied(str(exc)) from exc
            context["error"] = f"project: {exc}"
        else:
            if not name or len(name) > NAME_MAX:
                context["error"] = f"give the token a name of 1 to {NAME_MAX} characters"
            else:
                context["created"], context["plaintext"] = api_token_create(
                    user=request.user, project=project, name=name
                )
        status = 400 if context["error"] else 200
    context["tokens"] = api_tokens_managed_by(request.user)
    context["projects"] = projects_with_role(request.user, Role.ADMIN)
    return render(request, "accounts/tokens.html", context, status=status)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = object_for(request.user, ApiToken.objects.all(), token_id, role=Role.ADMIN, noun="token")
    api_token_revoke(token=token)
    return redirect("accounts:tokens")
