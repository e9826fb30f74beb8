"""`escape_controls`: untrusted names (file names, titles, model names) as a
reader may trust them. Bidi controls reorder what follows them
("exe.txt" with a right-to-left override reads "txt.exe"), zero-width and
other invisible or control characters hide or fake text; each is shown as
its escape (`\\u202e`), the rest as it is. Registered as a builtin
(settings.TEMPLATES), so templates use it without `{% load %}`; HTML
escaping still applies after it."""

from __future__ import annotations

import re

from django import template

register = template.Library()

# C0 and C1 controls, soft hyphen, Arabic letter mark, Mongolian vowel
# separator, zero-width and directional marks, line/paragraph separators,
# embeddings and overrides, invisible operators and isolates, BOM,
# interlinear annotations, tag characters
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@register.filter
def escape_controls(value: object) -> str:
    """`value` with each hidden character shown as its escape.

    >>> escape_controls("invoice\u202etxt.exe")
    'invoice\\\\u202etxt.exe'
    """
    return _HIDDEN.sub(_escape, str(value))
