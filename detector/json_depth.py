"""How deeply a JSON text nests, found without parsing it.

JSON nested hundreds of levels deep parses, but every recursive walk of it
afterwards (tool-call keys, storage checks, drawing) may hit Python's
recursion limit, in one place and not another. So the lab refuses such a
text before anything recursive sees it (LOOPGUARD_MAX_JSON_DEPTH). The scan
is iterative and runs at C speed: strings are cut out (`bytes.replace`, then
one regular expression for those holding brackets), then the brackets left
are counted (`bytes.replace` of the deepest pairs, `itertools.accumulate`).
Only a text that is too deep is walked again, token by token, to say where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

DEFAULT_MAX_DEPTH = 64

# a JSON string (never spans a line); what is not one cannot hide a bracket
_STRING = re.compile(r'"(?:[^"\\\n]++|\\.)*+"')
_SKELETON_STRING = re.compile(rb'"[^"\n]*+"')  # a string once its escapes are gone
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _STEP)
_NOT_SKELETON = bytes(b for b in range(256) if b not in _STEP and b not in b'"\n')
_PARENS = bytes.maketrans(b"[{]}", b"(())")  # the brackets as `_max_level` counts them
_LEVEL = {ord("("): 1, ord(")"): -1}
_ROUNDS = 64  # rounds of `_max_level` at most: each is a pass over what is left
_TOKEN = re.compile(r'"(?:[^"\\\n]++|\\.)*+"|[\[\]{}:,\n]|[^"\[\]{}:,\n\s]+')


@dataclass(frozen=True)
class DepthProblem:
    """Where a text first nests past the limit: its line (from 1) and the
    path of the value there (`events[0].arguments.a`, as far as known)."""

    depth: int
    line: int
    path: str

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"JSON nested deeper than {self.depth - 1} levels{where}"


def json_max_depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in `text` (0 for a scalar).

    >>> json_max_depth('{"a": [1, {"b": "]]]"}]}')
    3
    """
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")
    # Escaped backslashes, then escaped quotes, cannot end a string; once they
    # are gone, only quotes, brackets and newlines matter, a small part of
    # most texts: the strings are cut out of that (a regular expression over
    # all of the text took most of the time).
    if b"\\" in text:
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = text.translate(None, _NOT_SKELETON)
    # Most strings hold no bracket and are left as `""`: those go at C speed,
    # and the expression cuts out the few left. Two quotes side by side are a
    # string's ends, or the end of one and the start of the next, which then
    # join: no bracket moves in or out of a string, on lines whose quotes pair
    # up (each line's quotes are one run once the brackets are gone).
    if b'"' not in skeleton.translate(None, b"[]{}").replace(b'""', b""):
        skeleton = skeleton.replace(b'""', b"")
    return _max_level(_SKELETON_STRING.sub(b"", skeleton).translate(_PARENS, _NOT_BRACKETS))


def _max_level(parens: bytes) -> int:
    """`max(accumulate(+1 per "(", -1 per ")"), default=0)`. In a balanced
    text each "()" is a deepest pair, and removing them all (one C-speed
    `replace`) takes one level off: a few rounds leave a short rest to
    count. An unbalanced text is counted whole."""
    rest, rounds = parens, 0
    while rounds < _ROUNDS and len(shorter := rest.replace(b"()", b"")) < len(rest):
        rest, rounds = shorter, rounds + 1
    levels = list(accumulate(map(_LEVEL.__getitem__, rest)))
    if levels and (levels[-1] or min(levels) < 0):
        return max(accumulate(map(_LEVEL.__getitem__, parens)))
    return rounds + max(levels, default=0)


def json_depth_at(text: str, position: int) -> int:
    """The nesting depth at `position` of `text` (outside a string there).

    >>> json_depth_at('{"a": {"seq": 1}, "seq": 2}', 19)
    1
    """
    prefix = _STRING.sub("", text[:position]).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    return sum(map(_STEP.__getitem__, prefix))


def json_depth_problem(text: str | bytes, limit: int) -> DepthProblem | None:
    """None if `text` nests `limit` levels or fewer; otherwise where it first
    goes deeper."""
    # A text cannot nest deeper than it has opening brackets (those in
    # strings count too, which only makes the bound looser): a live message
    # of a few events has a handful, counted at a fraction of the scan's cost.
    if sum(map(text.count, ("{", "[") if isinstance(text, str) else (b"{", b"["))) <= limit:
        return None
    if json_max_depth(text) <= limit:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return _locate(text, limit)


def _locate(text: str, limit: int) -> DepthProblem:
    """Walk the tokens (iteratively) to the first bracket past `limit`,
    keeping the path of keys and indexes that leads there."""
    line = 1
    stack: list[list] = []  # per open container: [key or index, is_object, expecting_key]
    last_string = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in ("[", "{"):
            if len(stack) == limit:
                return DepthProblem(depth=limit + 1, line=line, path=_path(stack))
            stack.append([None if token == "{" else 0, token == "{", token == "{"])
        elif token in ("]", "}"):
            if stack:
                stack.pop()
        elif token == ":":
            if stack and stack[-1][1]:
                stack[-1][0], stack[-1][2] = last_string, False
        elif token == ",":
            if stack:
                if stack[-1][1]:
                    stack[-1][2] = True
                else:
                    stack[-1][0] += 1
        elif token.startswith('"'):
            last_string = token[1:-1]
    return DepthProblem(depth=limit + 1, line=line, path=_path(stack))  # unbalanced text: what is known


def _path(stack: list[list]) -> str:
    path = ""
    for key, is_object, _ in stack:
        if is_object:
            path += f".{key}" if path else str(key)
        else:
            path += f"[{key}]"
    return path
