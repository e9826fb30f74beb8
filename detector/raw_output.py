"""Raw output: code, markup or data written with no code fence (a model in
JSON mode, asked for "only the code", or for a page's HTML). Text that
opens as such is judged as a fenced code block is: a literal's items and
lines said again are held longer (`text_blocks`, `repeated_units`), and
its strings are not read as prose (`near_duplicate`).

Only openings that prose does not have count: JSON's `{` or `[` and an
object, an array or a string (not "[1]", nor a link's or a placeholder's
"[Your Name]"); a whole page's or document's `<!DOCTYPE`, `<?xml`,
`<html>`, `<svg>` (not a README's `<div align="center">`); a shebang, a C
include, a PHP opening, a comment of C's family (`//`, `/*`); a
lower-case `import` or `from … import`; Go's and Java's `package`, C#'s
`using …;`; a Python module's docstring. A Markdown heading and a
comment both open with "#": lines of "#" say nothing, and the first line
after them decides (`opening`).
"""

from __future__ import annotations

import re

CODE_OPENING = re.compile(
    r"""\{|\[\s*(?:[\[{"\]]|$)"""  # JSON
    r"|<(?:!DOCTYPE|!doctype|\?xml|html|svg)\b"  # a whole page or document
    r"|\#!/|\#include\s*[<\"]|<\?php|//|/\*"
    r"|import\s+[\w.{*]|from\s+[\w.]+\s+import\s"
    r"|package\s+[\w.]+\s*;?\s*$|using\s+[\w.]+\s*;"
    r'|"""|\'\'\''
)


def opens_as_code(text: str) -> bool:
    """Whether text, from its first visible character, opens as code,
    markup or data.

    >>> [opens_as_code(t) for t in ('{"id": 1', "[", "<!DOCTYPE html>", "<svg width", "#!/bin/sh", "import os")]
    [True, True, True, True, True, True]
    >>> [opens_as_code(t) for t in ("from a import b", '"' * 3 + "Tools.", "package main", "using System;")]
    [True, True, True, True]
    >>> [opens_as_code(t) for t in ("[Your Name]", "[1] Smith", "# Title", "Import it", '<div align="center">', "Sure")]
    [False, False, False, False, False, False]
    """
    return CODE_OPENING.match(text) is not None


def opening(text: str, starts_line: bool) -> bool | None:
    """How a channel's text opens, read from its pieces with a visible
    character (blocks, segments: `text` from its first visible character),
    in order, until it says: True, as code, markup or data; False, as
    prose; None, not yet. Lines of "#" (a comment, or a Markdown heading),
    and the rest of such a line, say nothing: the first line after them
    does ("# app.py" above `import os` is code, "# Title" above a paragraph
    prose).

    >>> [opening(t, True) for t in ("import os", "# app.py", "Sure", "#!/bin/sh", "// app.js")]
    [True, None, False, True, True]
    >>> opening("and the rest of a comment line", False) is None
    True
    """
    if not starts_line:
        return None
    if opens_as_code(text):
        return True
    return None if text[:1] == "#" else False
