from __future__ import annotations

from django.db.models import QuerySet

from .models import Session


def session_list() -> QuerySet[Session]:
    """Sessions, newest first."""
    return Session.objects.select_related("uploader").order_by("-created", "-id")


def session_count() -> int:
    return Session.objects.count()
