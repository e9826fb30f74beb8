"""Project membership for the tests' users and tokens: every test user is a
member of a project (the "default" one unless told), as the access rules
(loopguard_site/accounts/access.py) require for any read or write."""

from __future__ import annotations

from loopguard_site.accounts.models import ApiToken, Membership, Project, Role
from loopguard_site.accounts.services import api_token_create, default_project, membership_set


def member(user, role: str = Role.ADMIN, project: Project | None = None):
    """`user`, made a member of `project` (default: "default") with `role`."""
    membership_set(user=user, project=project or default_project(), role=role)
    return user


def project_token(*, user, name: str = "tests", project: Project | None = None) -> tuple[ApiToken, str]:
    """A token of `project` (default: "default") created by `user`, who
    becomes an admin member of it unless already a member."""
    project = project or default_project()
    Membership.objects.get_or_create(user=user, project=project, defaults={"role": Role.ADMIN})
    return api_token_create(user=user, project=project, name=name)
