"""Transcript importers: real agent and API formats in, LoopGuard events out.

>>> t = parse_bytes(b'{"type": "content", "text": "hi"}\\n', "chat.jsonl")
>>> t.format, [e["type"] for e in t.events]
('events', ['session', 'content'])

`parse_bytes` / `parse_path` return a `Transcript` whose events pass
`detector.events.validate_event` and start with a `session` event;
`parse_blocks` reads them a block at a time (blocks.py). Bad input
of any kind raises `TranscriptError` (naming the file and the line or
field), never another exception. One module per format; each has `NAME`,
`VERSION` (bumped whenever its output changes) and `parse(source)`; the
large-file formats also `read_blocks(source, size)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from . import anthropic_messages, claude_code, cline, codex, gemini_cli, loopguard_events, openai_chat, otel
from .blocks import BLOCK_EVENTS, TranscriptBlocks, whole_blocks
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
    "TranscriptBlocks",
    "TranscriptBuilder",
    "TranscriptError",
    "as_dict",
    "parse_blocks",
    "parse_bytes",
    "parse_path",
]


def parse_bytes(data: bytes, filename: str = "-", fmt: str = "auto") -> Transcript:
    """Import `data` (the bytes of file `filename`) as format `fmt`, or
    detect the format when `fmt` is "auto"."""
    source, parser = _source_parser(data, filename, fmt)
    try:
        return parser.parse(source)
    except RecursionError:
        raise TranscriptError("input nested too deeply", file=filename) from None


def parse_blocks(data: bytes, filename: str = "-", fmt: str = "auto", size: int = BLOCK_EVENTS) -> TranscriptBlocks:
    """`parse_bytes`, the events handed over in blocks of about `size`: as
    they are parsed in the formats that have `read_blocks`."""
    source, parser = _source_parser(data, filename, fmt)
    try:
        read = (
            parser.read_blocks(source, size)
            if hasattr(parser, "read_blocks")
            else whole_blocks(parser.parse(source), size)
        )
    except RecursionError:
        raise TranscriptError("input nested too deeply", file=filename) from None
    read.blocks = _too_deep_named(read.blocks, filename)
    return read


def _source_parser(data: bytes, filename: str, fmt: str) -> tuple[Source, ModuleType]:
    """The decoded upload and the parser module of its format."""
    source = Source(filename, decode(data, filename))
    if fmt == "auto":
        fmt = detect(source, FORMATS)
    elif fmt not in PARSERS:
        raise TranscriptError(f"unknown format {fmt!r} (known: auto, {', '.join(FORMATS)})", file=filename)
    return source, PARSERS[fmt]


def _too_deep_named(blocks: Iterator[list[dict]], filename: str) -> Iterator[list[dict]]:
    try:
        yield from blocks
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
