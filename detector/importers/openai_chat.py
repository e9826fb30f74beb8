"""The `openai` format: OpenAI Chat Completions (and compatible servers).

Accepts a stream of `chat.completion.chunk` records (SSE or one per line),
a whole chat completion object, or a plain messages array (or a request
body with `messages`). Only choice 0 is imported; other choices are noted
in the warnings. Streamed tool calls are assembled from their fragments
(name and argument pieces joined once, so O(n) in fragments) and emitted
when complete: when the next index or id starts, at finish, or at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

from .blocks import BLOCK_EVENTS, TranscriptBlocks
from .builder import TranscriptBuilder, as_dict, as_list, output_text, require_str, tool_args
from .source import Source
from .stream import stream_records, whole_document
from .transcript import Transcript

NAME = "openai"
VERSION = "openai/1"


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    for _ in _read(builder, source):
        pass
    return builder.finish()


def read_blocks(source: Source, size: int = BLOCK_EVENTS) -> TranscriptBlocks:
    """The events in blocks of about `size`, a stream's parsed as they are
    asked for (this format stamps no times: `take` may hand them over)."""
    builder = TranscriptBuilder(source, NAME, VERSION)

    def blocks() -> Iterator[list[dict]]:
        for _ in _read(builder, source):
            if len(builder.events) >= size:
                yield builder.take()
        if builder.events:
            yield builder.take()

    return TranscriptBlocks(NAME, VERSION, blocks(), builder.header)


def _read(builder: TranscriptBuilder, source: Source) -> Iterator[None]:
    """Fill `builder` from the file, pausing after each record of a stream."""
    document = whole_document(source)
    if isinstance(document, list):
        _messages(builder, document, "")
    elif isinstance(document, dict) and "messages" in document and "choices" not in document:
        builder.set_model(document.get("model"))
        _messages(builder, as_list(document.get("messages")), "messages")
    elif isinstance(document, dict) and any("message" in as_dict(c) for c in as_list(document.get("choices"))):
        _completion(builder, document)
    else:
        reader = ChunkReader(builder)
        for number, chunk in stream_records(source):
            reader.feed(chunk, number)
            yield
        reader.close()
    if not (builder.events or builder.taken):
        raise source.error("no OpenAI chat completion chunks, completion or messages found; is this the right format?")


def _reasoning_text(message: dict) -> str | None:
    """Reasoning of a delta or message: `reasoning_content` (DeepSeek, older
    vLLM) or `reasoning` (OpenRouter, newer vLLM); `reasoning_details` only
    when neither is there, since OpenRouter sends both with the same text."""
    text = require_str(message.get("reasoning_content")) or require_str(message.get("reasoning"))
    if text:
        return text
    parts = []
    for detail in as_list(message.get("reasoning_details")):
        detail = as_dict(detail)
        part = require_str(detail.get("text")) or require_str(detail.get("summary"))  # encrypted details are not text
        if part:
            parts.append(part)
    return "".join(parts) or None


def _content_text(value: object) -> str | None:
    """Message content: a string, or a list of parts whose text is joined."""
    if isinstance(value, list):
        value = "".join(as_dict(part).get("text", "") for part in value if isinstance(as_dict(part).get("text"), str))
    return require_str(value)


def _add_message_output(builder: TranscriptBuilder, message: dict) -> None:
    builder.text("reasoning", _reasoning_text(message))
    builder.text("content", _content_text(message.get("content")))
    builder.text("content", message.get("refusal"))
    for call in as_list(message.get("tool_calls")):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        builder.add(
            "tool_call",
            name=str(function.get("name") or ""),
            args=tool_args(function.get("arguments")),
            id=require_str(call.get("id")),
        )
    legacy = as_dict(message.get("function_call"))
    if legacy:
        builder.add("tool_call", name=str(legacy.get("name") or ""), args=tool_args(legacy.get("arguments")))


def _note_other_choices(builder: TranscriptBuilder, choices: list) -> None:
    others = sorted({str(as_dict(c).get("index")) for c in choices if as_dict(c).get("index", 0) != 0})
    if others:
        builder.warn(f"only choice 0 is imported; the input also has choices {others}")


def _completion(builder: TranscriptBuilder, completion: dict) -> None:
    builder.set_model(completion.get("model"))
    choices = as_list(completion.get("choices"))
    _note_other_choices(builder, choices)
    choice = next((as_dict(c) for c in choices if as_dict(c).get("index", 0) == 0), {})
    builder.add("turn")
    _add_message_output(builder, as_dict(choice.get("message")))
    if require_str(choice.get("finish_reason")):
        builder.add("finish", reason=choice["finish_reason"])


def _messages(builder: TranscriptBuilder, messages: list, path: str) -> None:
    for number, message in enumerate(messages):
        message = as_dict(message)
        role = message.get("role")
        if role == "user":
            builder.text("user", _content_text(message.get("content")))
        elif role == "assistant":
            builder.add("turn")
            _add_message_output(builder, message)
        elif role in ("tool", "function"):
            builder.add(
                "tool_result", id=require_str(message.get("tool_call_id")), output=output_text(message.get("content"))
            )
        else:
            builder.skip(None, f"{path}[{number}] role {role}")


class _ToolCallAssembler:
    """Fragments of streamed tool calls, by index, until they are complete."""

    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.pending: dict[int, dict] = {}

    def feed(self, fragment: dict) -> None:
        index = fragment.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else 0
        call_id = require_str(fragment.get("id"))
        current = self.pending.get(index)
        if current is not None and call_id and current["id"] and call_id != current["id"]:
            self.flush()  # a server that reuses index 0 for every call
            current = None
        if current is None:
            if any(other > index for other in self.pending):
                self.flush()
            else:
                self.flush(below=index)
            current = self.pending[index] = {"id": call_id, "name": [], "args": []}
        function = as_dict(fragment.get("function"))
        if isinstance(function.get("name"), str):
            current["name"].append(function["name"])
        if isinstance(function.get("arguments"), str):
            current["args"].append(function["arguments"])
        elif isinstance(function.get("arguments"), dict):
            current["args"].append(function["arguments"])

    def flush(self, below: int | None = None) -> None:
        """Emit the pending calls (all, or those with an index below `below`)."""
        if not self.pending:  # most chunks: nothing to sort
            return
        for index in sorted(self.pending):
            if below is not None and index >= below:
                continue
            call = self.pending.pop(index)
            pieces = call["args"]
            args = (
                pieces[0]
                if len(pieces) == 1 and isinstance(pieces[0], dict)
                else tool_args("".join(p for p in pieces if isinstance(p, str)))
            )
            self.builder.add("tool_call", name="".join(call["name"]), args=args, id=call["id"])


class ChunkReader:
    """Chat completion chunks, one at a time, as events on `builder`: the
    importer's stream parser, and `detector.stream_guard` over SDK chunks."""

    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.tools = _ToolCallAssembler(builder)
        self.response_id = object()  # matches no id: the first chunk with choice 0 starts a turn
        self.multiple_choices = False

    def feed(self, chunk: dict, number: int | None = None) -> None:
        """One chunk; `number` is its line (or position) for warnings."""
        builder, tools = self.builder, self.tools
        if "choices" not in chunk:
            if "error" in chunk:
                builder.warn(
                    f"line {number}: error: {output_text(as_dict(chunk['error']).get('message', chunk['error']))}"
                )
            else:
                builder.skip(number, chunk.get("type") or chunk.get("object") or "record without choices")
            return
        # written for the common chunk (one choice, a delta of text): this
        # runs for every chunk of a stream
        if builder.model is None:
            builder.set_model(chunk.get("model"))
        choices = chunk.get("choices")
        # choice 0 alone (nearly every chunk) needs neither the copy nor the scan for other choices
        if not (
            type(choices) is list and len(choices) == 1 and type(choices[0]) is dict and choices[0].get("index", 0) == 0
        ):
            choices = [c if isinstance(c, dict) else {} for c in choices] if isinstance(choices, list) else []
            if not self.multiple_choices and any(choice.get("index", 0) != 0 for choice in choices):
                self.multiple_choices = True
                _note_other_choices(builder, choices)
        for choice in choices:
            if choice.get("index", 0) != 0:
                continue
            # a response's turn starts at its first choice-0 chunk (after the last finish),
            # not at chunks without choices (Azure's prompt_filter_results, the usage chunk)
            if chunk.get("id") != self.response_id:
                tools.flush()
                self.response_id = chunk.get("id")
                builder.add("turn")
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            reasoning = delta.get("reasoning_content")
            if not (type(reasoning) is str and reasoning):
                reasoning = _reasoning_text(delta) if "reasoning" in delta or "reasoning_details" in delta else None
            content = delta.get("content")
            if not (type(content) is str and content) and (content is not None or "refusal" in delta):
                content = _content_text(content) or require_str(delta.get("refusal"))
            if reasoning or content:
                tools.flush()
            if reasoning:
                builder.add("reasoning", text=reasoning)
            if content:
                builder.add("content", text=content)
            if fragments := delta.get("tool_calls"):
                for fragment in as_list(fragments):
                    tools.feed(as_dict(fragment))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                tools.flush()
                builder.add("finish", reason=reason)
                self.response_id = object()  # servers that reuse one id: the next chunk is a new request

    def close(self) -> None:
        """The stream ended: emit the tool calls still being assembled."""
        self.tools.flush()
