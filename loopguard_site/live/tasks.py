"""Celery task of the live app: a thin interface to its services."""

from __future__ import annotations

from celery import shared_task

from .services import live_session_stream_stored


@shared_task
def stream_stored_session(live_session_id: int, source_session_id: int) -> str:
    """Stream a stored session into a live one at a model's pace; its state at the end."""
    return live_session_stream_stored(live_session_id=live_session_id, source_session_id=source_session_id).state
