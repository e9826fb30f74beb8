"""Who may reach what: the lab's access rules, in this one place. Views, API
views and consumers call these; none decides access on its own.

- A user reaches the projects they are a member of, with their role there
  (viewer < reviewer < admin, each allowed what the lower ones are). A
  superuser reaches every project as an admin.
- A request authenticated by an API token reaches its token's project only
  (`api_token_project_id` on the user, set by `accounts.selectors.api_token_user`),
  with its creator's current role there.
- An object of a project the user does not reach is answered as if it did
  not exist (404; close code 4404 on a socket), so ids leak nothing; a
  member whose role is too low for what they ask gets 403 (4403).

Refusals are Django's `Http404` and `PermissionDenied`: pages show them as
404 and 403, `api_view` turns them into the API's error body, consumers
close with `close_code(exc)`.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import F, Model, QuerySet
from django.http import Http404

from loopguard_site.errors import FieldError

from .models import ROLE_RANK, Membership, Project, Role

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404


def token_project_id(user: AbstractBaseUser) -> int | None:
    """The project a token-authenticated user is confined to (None: signed in)."""
    return getattr(user, "api_token_project_id", None)


def project_role(user: AbstractBaseUser, project_id: int) -> str | None:
    """The user's role in the project, None if they do not reach it."""
    if not user.is_authenticated:
        return None
    confined = token_project_id(user)
    if confined is not None and confined != project_id:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return Membership.objects.filter(user=user, project_id=project_id).values_list("role", flat=True).first()


def has_role(user: AbstractBaseUser, project_id: int, role: str) -> bool:
    granted = project_role(user, project_id)
    return granted is not None and ROLE_RANK[granted] >= ROLE_RANK[role]


def require_role(user: AbstractBaseUser, project_id: int, role: str, *, noun: str = "object") -> None:
    """Nothing if the user has `role` (or a higher one) in the project;
    otherwise Http404 (not a project of theirs) or PermissionDenied."""
    granted = project_role(user, project_id)
    if granted is None:
        raise Http404(f"no such {noun}")
    if ROLE_RANK[granted] < ROLE_RANK[role]:
        raise PermissionDenied(f"this needs the {role} role in the {noun}'s project; you are a {granted}")


def visible_project_ids(user: AbstractBaseUser) -> list[int] | None:
    """The ids of the projects the user reaches; None means every project."""
    if not user.is_authenticated:
        return []
    confined = token_project_id(user)
    if confined is not None:
        return [confined] if project_role(user, confined) else []
    if user.is_superuser:
        return None
    return list(Membership.objects.filter(user=user).values_list("project_id", flat=True))


def in_visible_projects(rows: QuerySet, user: AbstractBaseUser, project_field: str = "project") -> QuerySet:
    """`rows` narrowed to the projects the user reaches (`project_field`
    leads from a row to its project, e.g. "session__project")."""
    ids = visible_project_ids(user)
    return rows if ids is None else rows.filter(**{f"{project_field}__in": ids})


def object_for(
    user: AbstractBaseUser,
    rows: QuerySet,
    pk: object,
    *,
    role: str = Role.VIEWER,
    noun: str,
    project_field: str = "project",
) -> Model:
    """The row `pk` of `rows` if the user has `role` in its project; Http404
    for none or one of another project (the same answer), PermissionDenied
    for a role too low."""
    row = rows.annotate(access_project_id=F(project_field)).filter(pk=pk).first()
    if row is None:
        raise Http404(f"no {noun} with id {pk}")
    require_role(user, row.access_project_id, role, noun=noun)
    return row


def projects_with_role(user: AbstractBaseUser, role: str) -> list[Project]:
    """The projects the user reaches with at least `role`, by name."""
    ids = visible_project_ids(user)
    projects = Project.objects.all() if ids is None else Project.objects.filter(pk__in=ids)
    return [p for p in projects if has_role(user, p.pk, role)]


def project_for(user: AbstractBaseUser, chosen: object, role: str) -> Project:
    """The project a write goes into: `chosen` (an id or a name; a token's
    own project when left out), or the only one the user has `role` in.
    A `FieldError` naming `project` when none fits or it is ambiguous."""
    confined = token_project_id(user)
    if chosen in (None, "") and confined is not None:
        chosen = confined
    if chosen in (None, ""):
        candidates = projects_with_role(user, role)
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            names = ", ".join(p.name for p in candidates)
            raise FieldError(f"choose a project: you may write to {names}", "project")
        raise FieldError(f"this needs the {role} role in a project, and you have it in none", "project", 403)
    key = str(chosen)
    project = Project.objects.filter(**({"pk": int(key)} if key.isdigit() else {"name": key})).first()
    granted = project_role(user, project.pk) if project is not None else None
    if granted is None:
        raise FieldError(f"no project {key!r} of yours", "project")
    if ROLE_RANK[granted] < ROLE_RANK[role]:
        raise FieldError(f"this needs the {role} role in project {project.name}; you are a {granted}", "project", 403)
    return project


def require_ingest(user: AbstractBaseUser, session: Model) -> None:
    """A live session (a `transcripts.models.Session`) takes events from its
    creator (a reviewer or more of its project) or from an admin of its
    project; PermissionDenied otherwise."""
    require_role(user, session.project_id, Role.REVIEWER, noun="session")
    if session.uploader_id != user.pk and not has_role(user, session.project_id, Role.ADMIN):
        raise PermissionDenied(f"session {session.pk} is not yours to stream into")


def close_code(refusal: Exception) -> int:
    """The WebSocket close code of an access refusal."""
    return CLOSE_NOT_FOUND if isinstance(refusal, Http404) else CLOSE_FORBIDDEN


async def socket_refuse(consumer, code: int) -> None:
    """Refuse a socket at connect with `code`: accept, then close. A close
    before the accept reaches a client as an HTTP 403 handshake failure, so
    4401, 4403, 4404 and 4409 would never be seen."""
    await consumer.accept()
    await consumer.close(code=code)
