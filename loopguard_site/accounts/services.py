from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from loopguard_site.errors import FieldError

from .constants import DEFAULT_PROJECT
from .models import ApiToken, Membership, Project, Role
from .tokens import DISPLAY_LENGTH, new_token, token_hash


def default_project() -> Project:
    """The project "default" (the migrations create it; an empty database gets it here)."""
    return Project.objects.get_or_create(name=DEFAULT_PROJECT)[0]


def _keep_an_admin(*, user: AbstractBaseUser, project: Project) -> None:
    """Refuse (FieldError naming `role`) to take the admin role from `project`'s last admin."""
    admins = Membership.objects.select_for_update().filter(project=project, role=Role.ADMIN)
    if list(admins.values_list("user_id", flat=True)) == [user.pk]:
        raise FieldError(
            f"{user.get_username()} is the last admin of {project.name}: make another member admin first", "role"
        )


@transaction.atomic
def membership_set(*, user: AbstractBaseUser, project: Project, role: str) -> Membership:
    """Make `user` a member of `project` with `role` (replacing their earlier role)."""
    if role != Role.ADMIN:
        _keep_an_admin(user=user, project=project)
    return Membership.objects.update_or_create(user=user, project=project, defaults={"role": role})[0]


@transaction.atomic
def membership_remove(*, user: AbstractBaseUser, project: Project) -> None:
    _keep_an_admin(user=user, project=project)
    Membership.objects.filter(user=user, project=project).delete()


def api_token_create(*, user: AbstractBaseUser, project: Project, name: str) -> tuple[ApiToken, str]:
    """A new token of `project`, created by `user`; returns it with its
    plaintext, which is not stored anywhere and cannot be shown again."""
    plaintext = new_token()
    token = ApiToken.objects.create(
        user=user, project=project, name=name, token_hash=token_hash(plaintext), prefix=plaintext[:DISPLAY_LENGTH]
    )
    return token, plaintext


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke `token` (kept, for the record); a revoked token no longer authenticates."""
    ApiToken.objects.filter(pk=token.pk, revoked__isnull=True).update(revoked=timezone.now())
