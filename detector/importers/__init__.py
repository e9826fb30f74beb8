"""Transcript importers: real agent and API formats in, LoopGuard events out.

>>> t = parse_bytes(b'{"type": "content", "text": "hi"}\\n', "chat.jsonl")
>>> t.format, [e["type"] for e in t.events]
('events', ['session', 'content'])

`parse_bytes` / `parse_path` return a `Transcript` whose events pass
`detector.events.validate_event` and start with a `session` event. Bad input
of any kind raises `TranscriptError` (naming the file and the line or
field), never another exception. One module per format; each has `NAME`,
`VERSION` (bumped whenever its output changes) and `parse(source)`.
"""

from __future__ import annotations

from pathlib import Path

from . import anthropic_messages, claude_code, cline, codex, gemini_cli, loopguard_events, openai_chat, otel
from .builder import TranscriptBuilder, as_dict
from .detect import detect
from .source import Source, decode
from .transcript import FormatNotRecognised, Transcript, TranscriptError

# in the order event-format.md lists the format names
_PARSER_MODULES = (loopguard_events, openai_chat, anthropic_messages, claude_code, codex, gemini_cli, cline, otel)
PARSERS = {module.NAME: module for module in _PARSER_MODULES}
FORMATS = tuple(PARSERS)
PARSER_VERSIONS = {name: module.VERSION for name, module in PARSERS.items()}

# `PARSERS`, `Source` and `TranscriptBuilder` import a stream as it comes:
# builder = TranscriptBuilder(Source(name, ""), module.NAME, module.VERSION),
# then a streaming format's `module.ChunkReader(builder)` fed chunk by chunk.
__all__ = [
    "FORMATS",
    "PARSERS",
    "PARSER_VERSIONS",
    "FormatNotRecognised",
    "Source",
    "Transcript",
    "TranscriptBuilder",
    "TranscriptError",
    "as_dict",
    "parse_bytes",
    "parse_path",
]


def parse_bytes(data: bytes, filename: str = "-", fmt: str = "auto") -> Transcript:
    """Import `data` (the bytes of file `filename`) as format `fmt`, or
    detect the format when `fmt` is "auto"."""
    source = Source(filename, decode(data, filename))
    if fmt == "auto":
        fmt = detect(source, FORMATS)
    elif fmt not in PARSERS:
        raise TranscriptError(f"unknown format {fmt!r} (known: auto, {', '.join(FORMATS)})", file=filename)
    try:
        return PARSERS[fmt].parse(source)
    except RecursionError:
        raise TranscriptError("input nested too deeply", file=filename) from None


def parse_path(path: str | Path, fmt: str = "auto") -> Transcript:
    """Import the file at `path` (see `parse_bytes`); an unreadable file is
    a `TranscriptError` too."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    return parse_bytes(data, str(path), fmt)
