"""Monitors as the lab runs them: a profile's detectors with the LLM
judge's HTTP client (the detectors do no I/O of their own), and the check
that a profile's Monitor can be kept between live messages (pickled)."""

from __future__ import annotations

from detector import ConfigError, Monitor, Profile
from detector.chat_client import judge_client_for


def profile_monitor(profile: Profile, *, model: str = "") -> Monitor:
    """A new Monitor of `profile` for a stream of `model`; `ConfigError`
    when the profile cannot run here (its judge's key variable unset, say)."""
    return Monitor(profile, model=model, judge_client=judge_client_for(profile))


def profile_unkept_error(profile: Profile) -> str | None:
    """Why the lab cannot run `profile`, naming the detector, or None: it
    must build here and pickle (live sessions keep their Monitor so)."""
    try:
        monitor = profile_monitor(profile)
    except ConfigError as exc:
        return str(exc)
    for name, why in monitor.unpicklable_detectors().items():
        return f"{name}: this detector's state cannot be kept between live messages (it does not pickle: {why})"
    return None
