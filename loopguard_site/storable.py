"""What valid JSON may hold that the database cannot store.

Valid JSON may hold `\\u0000` and unpaired surrogates (`\\ud800`);
PostgreSQL's jsonb and UTF-8 text refuse both (NaN and Infinity the
importers already turn into null). An upload holding one is refused with
the event and field named, before any row is written, instead of failing
half-way through an INSERT.
"""

from __future__ import annotations

import json
import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def _string_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    if _SURROGATE.search(text):
        return "an unpaired surrogate (\\ud800-\\udfff)"
    return None


def _value_problem(value: object, path: str) -> tuple[str, str] | None:
    """(field path, problem) of the first unstorable part of `value`."""
    if isinstance(value, str):
        problem = _string_problem(value)
        return (path, problem) if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            problem = _string_problem(key)
            found = (child, f"a key with {problem}") if problem else _value_problem(item, child)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if found := _value_problem(item, f"{path}[{index}]"):
                return found
    return None


def unstorable_value(value: object) -> tuple[str, str] | None:
    """(field path, problem) of the first string (or key) in `value` that
    holds a NUL or an unpaired surrogate, or None.

    >>> unstorable_value({"labels": [{"note": "a\\x00b"}]})
    ('labels[0].note', 'a NUL character (\\\\u0000)')
    """
    return _value_problem(value, "")


def unstorable_event(events: list[dict], text: str | None = None) -> tuple[int, str, str] | None:
    """(event number from 1, field path, problem) of the first event the
    database cannot store, or None. One `json.dumps(events,
    ensure_ascii=False)` (`text`, when the caller has it) answers the common
    case; only a suspicious list is walked."""
    if text is None:
        text = json.dumps(events, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a surrogate
        pass
    else:
        if "\\u0000" not in text:
            return None
    for number, event in enumerate(events, 1):
        if found := _value_problem(event, ""):
            return number, found[0], found[1]
    return None
