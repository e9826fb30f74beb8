"""Building event streams and running one detector over them."""

from __future__ import annotations

from detector.config import Profile
from detector.monitor import Monitor
from detector.params import build_params
from detector.registry import DETECTORS


def only(detector: str, model: str = "", **params) -> Monitor:
    """A monitor running just `detector`, with `params` over its defaults."""
    cls = DETECTORS[detector]
    profile = Profile("test", {detector: build_params(cls.Params, params, "test")})
    return Monitor(profile, model=model)


def call(name: str = "read_file", id: str | None = None, **args) -> dict:
    event = {"type": "tool_call", "name": name, "args": args}
    if id is not None:
        event["id"] = id
    return event


def result(ok: bool | None = True, output: str = "", id: str | None = None) -> dict:
    event: dict = {"type": "tool_result", "output": output}
    if ok is not None:
        event["ok"] = ok
    if id is not None:
        event["id"] = id
    return event


def turn(*events: dict, reason: str = "tool_calls") -> list[dict]:
    """One model request: its events, then `finish`; tool results go after it."""
    calls = [e for e in events if e["type"] != "tool_result"]
    results = [e for e in events if e["type"] == "tool_result"]
    return [{"type": "turn"}, *calls, {"type": "finish", "reason": reason}, *results]


def detections(monitor: Monitor, events: list[dict]) -> list:
    found = []
    for event in events:
        found.extend(monitor.feed(event))
    return found


def run(monitor: Monitor, events: list[dict]) -> list[tuple]:
    """(type, start, end, at, repeats, action) of every detection, in order."""
    return [(d.type, d.start, d.end, d.at, d.repeats, d.action) for d in detections(monitor, events)]
