"""Bytes in, text and JSON out: decoding and JSON parsing that fail with a
`TranscriptError` naming the file and line, never anything else.

Accepted encodings: UTF-8, UTF-8 with a BOM, UTF-16 with a BOM. Files with
NUL bytes after decoding are binary, not transcripts.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from .transcript import TranscriptError

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(data: bytes, file: str) -> str:
    """The text of `data`, or a `TranscriptError` saying why it is not text."""
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    nul = data.find(b"\x00")
    if encoding != "utf-16" and nul >= 0:  # UTF-16 without a BOM lands here too
        line = data.count(b"\n", 0, nul) + 1
        raise TranscriptError("binary file (NUL byte), not a text transcript", file=file, line=line)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(
            f"not {encoding.upper()} text: byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded",
            file=file,
            line=line,
        ) from None
    text = text.removeprefix("\ufeff")
    nul = text.find("\x00")
    if nul >= 0:
        raise TranscriptError(
            "binary file (NUL character), not a text transcript", file=file, line=text.count("\n", 0, nul) + 1
        )
    if not text.strip():
        raise TranscriptError("empty file", file=file)
    return text


def _json_error(exc: json.JSONDecodeError, text: str) -> str:
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"truncated JSON: {exc.msg} (column {exc.colno})"
    return f"invalid JSON: {exc.msg} (column {exc.colno})"


def _finite(number: str) -> float | None:
    value = float(number)
    return value if math.isfinite(value) else None


def _bounded_int(digits: str) -> int | None:
    # Python refuses to convert integers longer than 4,300 digits (a guard against slow parsing)
    return int(digits) if len(digits.lstrip("-")) <= 4300 else None


# every JSON the importers read goes through this decoder (`JSON_DECODER.decode`
# raises ValueError, or RecursionError for absurd nesting)
JSON_DECODER = json.JSONDecoder(parse_float=_finite, parse_int=_bounded_int, parse_constant=lambda _: None)
# `loads` tries the C scanner first without the call to `_bounded_int` per
# integer: where that finds an integer too long for Python it raises
# ValueError, and the text goes through `JSON_DECODER`, as does one that is
# not exactly one JSON value (its error said by `JSON_DECODER`)
_SCAN = json.JSONDecoder(parse_float=_finite, parse_constant=lambda _: None).scan_once


def loads(text: str, file: str, line: int | None = None) -> object:
    """`json.loads` with errors as `TranscriptError`. `line` is the line
    `text` starts on when it is one line of a larger file. NaN, Infinity and
    overflowing numbers (Python writers emit them; JSON has none, and
    PostgreSQL's jsonb refuses them) and integers too long for Python are
    read as null."""
    try:
        try:
            value, end = _SCAN(text, 0)
            if end == len(text):
                return value
        except (StopIteration, ValueError):
            pass
        return JSON_DECODER.decode(text)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line + exc.lineno - 1
        raise TranscriptError(_json_error(exc, text), file=file, line=at) from None
    except RecursionError:
        raise TranscriptError("JSON nested too deeply", file=file, line=line) from None


@dataclass
class Source:
    """A decoded upload: its file name (for messages) and text."""

    file: str
    text: str
    _document: list = field(default_factory=list, repr=False)  # the parsed document, once parsed
    _lines: list = field(default_factory=list, repr=False)  # the non-blank lines, once split

    def error(self, message: str, *, line: int | None = None, field: str | None = None) -> TranscriptError:
        return TranscriptError(message, file=self.file, line=line, field=field)

    def lines(self) -> list[tuple[int, str]]:
        """(line number from 1, line) of every non-blank line (split once:
        detection and the parser both read them)."""
        if not self._lines:
            numbered = enumerate(split_lines(self.text), 1)
            self._lines.extend((number, line) for number, line in numbered if line.strip())
        return self._lines

    def first_line(self) -> str:
        """The first non-blank line, without its leading blanks."""
        return self.lines()[0][1].lstrip()

    def json_lines(self) -> Iterator[tuple[int, dict]]:
        """(line number, object) of every non-blank line, each a JSON object."""
        for number, line in self.lines():
            yield number, self.json_object(line, number)

    def json_object(self, text: str, line: int) -> dict:
        value = loads(text, self.file, line)
        if not isinstance(value, dict):
            raise self.error(f"expected a JSON object, got {type_name(value)}", line=line)
        return value

    def json_document(self) -> object:
        """The whole text as one JSON value (parsed once, then remembered:
        detection and the parser both ask for it)."""
        if not self._document:
            self._document.append(loads(self.text, self.file))
        return self._document[0]


def split_lines(text: str) -> list[str]:
    """Lines ended by LF or CRLF only: `str.splitlines` also splits at
    U+2028, U+0085 and others, which JSON writers leave raw inside strings."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def type_name(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    return {dict: "an object", list: "an array", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )
