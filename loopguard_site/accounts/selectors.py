from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from .access import in_visible_projects, projects_with_role
from .models import ApiToken, Membership, Project, Role
from .tokens import TOKEN_PREFIX, token_hash


def api_token_user(plaintext: str) -> AbstractBaseUser | None:
    """The active user a live (not revoked) token belongs to, else None. The
    user carries `api_token_project_id`: accounts.access confines it to the
    token's project."""
    if not plaintext.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=token_hash(plaintext), revoked__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    token.user.api_token_project_id = token.project_id
    return token.user


def api_tokens_managed_by(user: AbstractBaseUser) -> list[ApiToken]:
    """The tokens of every project the user is an admin of, newest first,
    revoked ones included."""
    projects = projects_with_role(user, Role.ADMIN)
    return list(
        in_visible_projects(ApiToken.objects.select_related("user", "project"), user).filter(project__in=projects)
    )


def project_named(name: str) -> Project | None:
    return Project.objects.filter(name=name).first()


def project_members(project: Project) -> list[Membership]:
    return list(Membership.objects.filter(project=project).select_related("user").order_by("user__username"))


def user_named(username: str) -> AbstractBaseUser | None:
    return get_user_model().objects.filter(username=username).first()
