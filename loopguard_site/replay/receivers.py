"""Replay's answers to what the transcripts layer below announces."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from loopguard_site.transcripts.models import Session

from .services import sessions_scan


def scan_imported(sender: object, *, sessions: list[Session], user: AbstractBaseUser | None, **kwargs) -> None:
    """Uploaded sessions are scanned as they arrive, each with its own profile."""
    sessions_scan(sessions=sessions, user=user)
