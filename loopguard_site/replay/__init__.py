"""Replay lab: run stored sessions through detector profiles in Celery jobs,
store every detection and checkpoint evaluation, and compare profiles."""
