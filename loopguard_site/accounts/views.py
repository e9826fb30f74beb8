"""The API token page (the tokens of the projects the user administers, a
new one with its plaintext shown on this one answer only, revocation), the
projects page (the user's projects and roles; an admin sets members' roles)
and the login page, throttled (login_throttle)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from loopguard_site.errors import FieldError, page_error

from .access import has_role, object_for, project_for, project_role, projects_with_role
from .login_throttle import login_failed, login_succeeded, login_wait
from .models import ApiToken, Project, Role
from .selectors import api_tokens_managed_by, project_members, user_named
from .services import api_token_create, api_token_revoke, membership_remove, membership_set

NO_ROLE = "none"  # the members form's choice that removes a member

NAME_MAX = 100


class ThrottledLoginView(auth_views.LoginView):
    """Django's login, refused with 429 while the username or the client
    address is locked out, whatever the password."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        self.attempt = {"username": request.POST.get("username", ""), "address": request.META.get("REMOTE_ADDR", "")}
        wait = login_wait(**self.attempt)
        if wait is None:
            return super().post(request, *args, **kwargs)
        minutes = -(-wait // 60)
        throttled = f"Too many failed sign-ins for this account or from this address; try again in {minutes} min."
        response = self.render_to_response(self.get_context_data(throttled=throttled), status=429)
        response["Retry-After"] = str(wait)
        return response

    def form_valid(self, form) -> HttpResponse:
        login_succeeded(username=self.attempt["username"])
        return super().form_valid(form)

    def form_invalid(self, form) -> HttpResponse:
        login_failed(**self.attempt)
        return super().form_invalid(form)


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    context = {"created": None, "plaintext": None, "error": None, "values": request.POST}
    status = 200
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        try:
            project = project_for(request.user, request.POST.get("project"), Role.ADMIN)
        except FieldError as exc:
            context["error"] = page_error(exc)
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


@login_required
@require_http_methods(["GET"])
def project_list(request: HttpRequest) -> HttpResponse:
    rows = []
    for project in projects_with_role(request.user, Role.VIEWER):
        admin = has_role(request.user, project.pk, Role.ADMIN)
        rows.append((project, project_role(request.user, project.pk), project_members(project) if admin else None))
    return render(request, "accounts/projects.html", {"rows": rows, "roles": [*Role.values, NO_ROLE]})


@login_required
@require_POST
def project_member_set(request: HttpRequest, project_id: int) -> HttpResponse:
    """`username` and `role` (viewer, reviewer, admin, or none to remove them), by an admin of the project."""
    project = object_for(
        request.user, Project.objects.all(), project_id, role=Role.ADMIN, noun="project", project_field="pk"
    )
    username, role = request.POST.get("username", "").strip(), request.POST.get("role", "")
    user = user_named(username)
    if user is None:
        return HttpResponse(f"username: no user {username!r}", status=400, content_type="text/plain")
    try:
        if role == NO_ROLE:
            membership_remove(user=user, project=project)
        elif role in Role.values:
            membership_set(user=user, project=project, role=role)
        else:
            return HttpResponse(
                f"role: one of {', '.join(Role.values)} or {NO_ROLE}", status=400, content_type="text/plain"
            )
    except FieldError as exc:
        return HttpResponse(page_error(exc), status=exc.status, content_type="text/plain")
    return redirect("accounts:projects")
