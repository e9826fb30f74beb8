"""The event format (docs/event-format.md): validation of one event.

`validate_event` checks the fields a detector relies on and raises
`EventError` naming the field; unknown fields are kept and ignored.
"""

from __future__ import annotations

EVENT_TYPES = ("session", "turn", "user", "reasoning", "content", "tool_call", "tool_result", "finish")
TEXT_CHANNELS = ("reasoning", "content")


class EventError(ValueError):
    """An event that does not follow the contract. `field` names what is wrong."""

    def __init__(self, message: str, *, field: str | None = None, line: int | None = None):
        super().__init__(message)
        self.field = field
        self.line = line

    def __str__(self) -> str:
        prefix = f"line {self.line}: " if self.line is not None else ""
        return prefix + self.args[0]


def _require(event: dict, name: str, kind: type, optional: bool = False) -> None:
    value = event.get(name)
    if value is None and optional:
        return
    # bool is a subclass of int: only accept it where a bool is asked for.
    wrong_bool = isinstance(value, bool) and kind is not bool
    if name not in event or not isinstance(value, kind) or wrong_bool:
        raise EventError(f"field {name!r} of a {event.get('type')} event must be {_KIND_NAMES[kind]}", field=name)


_KIND_NAMES = {str: "a string", dict: "an object", bool: "true or false"}


def validate_event(event: object) -> dict:
    """Return `event` if it follows the contract, else raise `EventError`.

    >>> validate_event({"type": "content", "text": "hi"})["text"]
    'hi'
    """
    if not isinstance(event, dict):
        raise EventError("an event must be a JSON object", field=None)
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        raise EventError(f"unknown event type {kind!r}", field="type")
    if kind in TEXT_CHANNELS or kind == "user":
        _require(event, "text", str)
    elif kind == "tool_call":
        _require(event, "name", str)
        if "args" in event and not isinstance(event["args"], dict):
            raise EventError("field 'args' of a tool_call event must be an object", field="args")
        _require(event, "id", str, optional=True)
    elif kind == "tool_result":
        _require(event, "ok", bool, optional=True)
        _require(event, "output", str, optional=True)
        _require(event, "id", str, optional=True)
    elif kind == "finish":
        _require(event, "reason", str, optional=True)
    elif kind == "turn":
        _require(event, "prompt", str, optional=True)
    if "t" in event and event["t"] is not None:
        if isinstance(event["t"], bool) or not isinstance(event["t"], (int, float)):
            raise EventError("field 't' must be a number of seconds", field="t")
    return event
