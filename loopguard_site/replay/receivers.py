"""Replay's answers to what the transcripts layer below announces, and to
its sessions' deletion (which takes their runs with it)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from loopguard_site.transcripts.models import Session

from .models import ReplayRun
from .services import replay_run_deleted, sessions_scan


def scan_imported(sender: object, *, sessions: list[Session], user: AbstractBaseUser | None, **kwargs) -> None:
    """Uploaded sessions are scanned as they arrive, each with its own profile."""
    sessions_scan(sessions=sessions, user=user)


def run_deleting(sender: object, *, instance: ReplayRun, **kwargs) -> None:
    """A run deleted with its session mid-job still counts on its job."""
    replay_run_deleted(run=instance)
