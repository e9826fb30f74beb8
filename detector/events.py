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


_KIND_NAMES = {str: "a string", dict: "an object", bool: "true or false"}

# Per event type, its fields in the order they are checked: (name, type,
# whether null passes, the value an absent field counts as).
_FIELDS: dict[str, tuple[tuple[str, type, bool, object], ...]] = {
    "session": (),
    "turn": (("prompt", str, True, None),),
    "user": (("text", str, False, None),),
    "reasoning": (("text", str, False, None),),
    "content": (("text", str, False, None),),
    "tool_call": (("name", str, False, None), ("args", dict, False, {}), ("id", str, True, None)),
    "tool_result": (("ok", bool, True, None), ("output", str, True, None), ("id", str, True, None)),
    "finish": (("reason", str, True, None),),
}


def validate_event(event: object) -> dict:
    """Return `event` if it follows the contract, else raise `EventError`.

    >>> validate_event({"type": "content", "text": "hi"})["text"]
    'hi'
    """
    if not isinstance(event, dict):
        raise EventError("an event must be a JSON object", field=None)
    kind = event.get("type")
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise EventError(f"unknown event type {kind!r}", field="type")
    # a table, not a call per field: every imported event passes here
    for name, wanted, null_passes, absent in fields:
        value = event.get(name, absent)
        if not isinstance(value, wanted) and not (null_passes and value is None):
            raise EventError(f"field {name!r} of a {kind} event must be {_KIND_NAMES[wanted]}", field=name)
    t = event.get("t")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
        raise EventError("field 't' must be a number of seconds", field="t")
    return event
