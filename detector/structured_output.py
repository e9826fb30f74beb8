"""Structured output: text that opens as JSON (a model in JSON mode, a
tool's arguments written out) is data, which the text detectors judge as
code in a fenced block: its literals' items and lines said again are held
longer, and its strings are not read as prose."""

from __future__ import annotations

import re

# An object, or an array of objects, arrays or strings (not "[1]", nor a
# link's or a placeholder's "[Your Name]").
JSON_OPENING = re.compile(r'\{|\[\s*(?:[\[{"\]]|$)')


def opens_as_json(text: str) -> bool:
    """Whether text, from its first visible character, opens as JSON.

    >>> [opens_as_json(t) for t in ('{"id": 1', '[{"a"', "[", '["x", ', "[Your Name]", "[1] Smith", "Sure")]
    [True, True, True, True, False, False, False]
    """
    return text[:1] in "{[" and JSON_OPENING.match(text) is not None
