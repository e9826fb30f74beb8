"""The `anthropic` format: Anthropic Messages API streams (SSE or one event
per line) and whole Messages API response objects.

Stream events used: message_start (model, a new turn), content_block_start
(text / thinking / tool_use / server_tool_use; redacted_thinking is noted as
skipped), content_block_delta (text_delta, thinking_delta, input_json_delta;
signature_delta carries no text), content_block_stop (completes a tool
call), message_delta (stop_reason -> finish), error (-> warnings). Tool
input pieces are joined once at the block's end: O(n) in pieces.
"""

from __future__ import annotations

from .builder import TranscriptBuilder, as_dict, as_list, output_text, require_str, tool_args
from .source import Source
from .stream import stream_records, whole_document
from .transcript import Transcript

NAME = "anthropic"
VERSION = "anthropic/1"

STOP_REASONS = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
TOOL_USE_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
IGNORED_DELTAS = ("signature_delta",)


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    document = whole_document(source)
    if isinstance(document, dict) and document.get("type") == "message":
        _response(builder, document)
    else:
        _stream(builder, source)
    if not builder.events:
        raise source.error("no Anthropic Messages stream events or response found; is this the right format?")
    return builder.finish()


def finish_reason(stop_reason: str) -> str:
    """The contract's finish reason for an Anthropic stop_reason (others kept)."""
    return STOP_REASONS.get(stop_reason, stop_reason)


def add_block(builder: TranscriptBuilder, block: dict, line: int | None) -> None:
    """One complete content block (of a response, or as a stream starts it)."""
    kind = block.get("type")
    if kind == "text":
        builder.text("content", block.get("text"))
    elif kind == "thinking":
        builder.text("reasoning", block.get("thinking"))
    elif kind in TOOL_USE_BLOCKS:
        builder.add(
            "tool_call",
            name=str(block.get("name") or ""),
            args=tool_args(block.get("input")),
            id=require_str(block.get("id")),
        )
    elif kind == "tool_result" or str(kind).endswith("_tool_result"):
        ok = not block["is_error"] if isinstance(block.get("is_error"), bool) else None
        builder.add(
            "tool_result", id=require_str(block.get("tool_use_id")), ok=ok, output=output_text(block.get("content"))
        )
    else:
        builder.skip(line, f"content block {kind}")


def _response(builder: TranscriptBuilder, message: dict) -> None:
    builder.set_model(message.get("model"))
    builder.add("turn")
    for block in as_list(message.get("content")):
        add_block(builder, as_dict(block), None)
    if require_str(message.get("stop_reason")):
        builder.add("finish", reason=finish_reason(message["stop_reason"]))


class EventReader:
    """Messages stream events, one at a time, as events on `builder`: the
    importer's stream parser, and `detector.stream_guard` over SDK events."""

    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.tool_blocks: dict[object, dict] = {}  # block index -> tool_use being streamed

    def _complete(self, index: object) -> None:
        block = self.tool_blocks.pop(index)
        pieces = block["input_pieces"]
        args = tool_args("".join(pieces)) if pieces else tool_args(block.get("input"))
        self.builder.add("tool_call", name=str(block.get("name") or ""), args=args, id=require_str(block.get("id")))

    def feed(self, event: dict, number: int | None = None) -> None:
        """One stream event; `number` is its line (or position) for errors."""
        builder, tool_blocks = self.builder, self.tool_blocks
        kind = event.get("type")
        if not isinstance(kind, str):
            raise builder.source.error("not an Anthropic stream event (no 'type')", line=number, field="type")
        if kind == "message_start":
            message = as_dict(event.get("message"))
            builder.set_model(message.get("model"))
            builder.add("turn")
        elif kind == "content_block_start":
            block = as_dict(event.get("content_block"))
            if block.get("type") in TOOL_USE_BLOCKS:
                tool_blocks[_key(event.get("index"))] = {**block, "input_pieces": []}
            else:
                add_block(builder, block, number)
        elif kind == "content_block_delta":
            _delta(builder, tool_blocks, event, number)
        elif kind == "content_block_stop":
            if _key(event.get("index")) in tool_blocks:
                self._complete(_key(event.get("index")))
        elif kind == "message_delta":
            for index in list(tool_blocks):
                self._complete(index)
            stop = as_dict(event.get("delta")).get("stop_reason")
            if require_str(stop):
                builder.add("finish", reason=finish_reason(stop))
        elif kind == "error":
            error = as_dict(event.get("error"))
            builder.warn(f"line {number}: {error.get('type', 'error')}: {output_text(error.get('message'))}")
        else:  # message_stop, ping and event types added after this parser
            builder.skip(number, kind)

    def close(self) -> None:
        """The stream ended: a stream cut before its blocks stopped still
        emits the tool calls it started."""
        for index in list(self.tool_blocks):
            self._complete(index)


def _stream(builder: TranscriptBuilder, source: Source) -> None:
    reader = EventReader(builder)
    for number, event in stream_records(source):
        reader.feed(event, number)
    reader.close()


def _key(index: object) -> object:
    """A block index usable as a dict key (the input is untrusted)."""
    return index if isinstance(index, (int, str)) else repr(index)


def _delta(builder: TranscriptBuilder, tool_blocks: dict, event: dict, line: int) -> None:
    delta = as_dict(event.get("delta"))
    kind = delta.get("type")
    if kind == "text_delta":
        builder.text("content", delta.get("text"))
    elif kind == "thinking_delta":
        builder.text("reasoning", delta.get("thinking"))
    elif kind == "input_json_delta":
        block = tool_blocks.get(_key(event.get("index")))
        if block is not None and isinstance(delta.get("partial_json"), str):
            block["input_pieces"].append(delta["partial_json"])
    elif kind not in IGNORED_DELTAS:
        builder.skip(line, f"content_block_delta {kind}")


def add_user_content(builder: TranscriptBuilder, content: object, line: int | None) -> None:
    """A user message of Anthropic shape (text, or blocks: text -> `user`,
    tool_result -> `tool_result`); Claude Code and Cline store these too."""
    if isinstance(content, str):
        builder.text("user", content)
        return
    for block in as_list(content):
        block = as_dict(block)
        if block.get("type") == "text":
            builder.text("user", block.get("text"))
        elif block.get("type") == "tool_result":
            add_block(builder, block, line)
        else:
            builder.skip(line, f"user content block {block.get('type')}")
