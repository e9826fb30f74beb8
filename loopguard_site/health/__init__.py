"""Diagnostics that prove the moving parts are connected: a Celery task that
reaches the database and a WebSocket echo through the channel layer."""
