"""Which format a file is in, told from its content (never its name).

Looks at the first non-blank line: server-sent-event framing means an API
stream; a whole JSON document is told by its shape; otherwise the first
lines are JSON Lines records, each told by its keys and `type`. Reads at
most the first `_PROBE_LINES` lines beyond the document parse.
"""

from __future__ import annotations

from itertools import islice

from ..events import EVENT_TYPES
from .source import JSON_DECODER, Source
from .stream import is_sse, stream_records, whole_document
from .transcript import FormatNotRecognised, TranscriptError

_PROBE_LINES = 50
# tuples, not sets: membership compares with ==, so an unhashable value read
# from the input cannot raise TypeError
ANTHROPIC_STREAM_TYPES = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
)
CODEX_RECORD_TYPES = (
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
)
SPAN_KEYS = frozenset({"spanContext", "traceId", "context", "startTime", "start_time", "startTimeUnixNano"})
CLAUDE_CODE_KEYS = frozenset({"parentUuid", "leafUuid", "isSidechain", "uuid"})
CLAUDE_CODE_TYPES = (
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "permission-mode",
    "progress",
    "attachment",
    "system",
    "custom-title",
    "agent-name",
    "last-prompt",
)
GEMINI_MESSAGE_TYPES = (
    "user",
    "gemini",
    "info",
    "error",
    "warning",
)
ANTHROPIC_ONLY_BLOCKS = (
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
)


def classify_record(record: dict) -> str | None:
    """The format one JSON Lines record belongs to, or None."""
    kind = record.get("type") if isinstance(record.get("type"), str) else None
    if "resourceSpans" in record or ("attributes" in record and SPAN_KEYS & record.keys()):
        return "otel"
    if "choices" in record or str(record.get("object", "")).startswith("chat.completion"):
        return "openai"
    if kind in ANTHROPIC_STREAM_TYPES and "payload" not in record and "content" not in record:
        return "anthropic"
    if (kind in CODEX_RECORD_TYPES and "payload" in record) or "record_type" in record:
        return "codex"
    if ("sessionId" in record and "projectHash" in record) or "$set" in record or kind == "gemini":
        return "gemini-cli"
    if (
        CLAUDE_CODE_KEYS & record.keys()
        or kind in CLAUDE_CODE_TYPES
        or ("message" in record and kind in ("user", "assistant"))
    ):
        return "claude-code"
    if kind in GEMINI_MESSAGE_TYPES and "content" in record and "text" not in record:
        return "gemini-cli"
    if kind in EVENT_TYPES:
        return "events"
    return None


def _classify_messages(messages: list) -> str:
    """A bare messages array: Anthropic-style content blocks are Cline's
    api_conversation_history.json, anything else an OpenAI messages array."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" or "tool_calls" in message or "function_call" in message:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ANTHROPIC_ONLY_BLOCKS for b in content
        ):
            return "cline"
    return "openai"


def classify_document(document: object) -> str | None:
    """The format of a whole-file JSON value, or None."""
    if isinstance(document, list):
        items = [item for item in document[:_PROBE_LINES] if isinstance(item, dict)]
        if not items:
            return None
        if any("say" in item or "ask" in item for item in items):
            return "cline"
        if classify_record(items[0]) == "otel":
            return "otel"
        if any("role" in item for item in items):
            return _classify_messages(items)
        return None
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("messages"), list) and ("sessionId" in document or "projectHash" in document):
        return "gemini-cli"
    if document.get("type") == "message" and isinstance(document.get("content"), list):
        return "anthropic"
    if isinstance(document.get("messages"), list):
        return _classify_messages(document["messages"])
    return classify_record(document)


def _classify_sse(source: Source) -> str | None:
    try:
        for _, record in islice(stream_records(source), _PROBE_LINES):
            found = classify_record(record)
            if found in ("openai", "anthropic"):
                return found
    except TranscriptError:
        return None
    return None


def _classify_lines(source: Source) -> str | None:
    for _, line in source.lines()[:_PROBE_LINES]:
        try:
            record = JSON_DECODER.decode(line)
        except (ValueError, RecursionError):
            return None
        if isinstance(record, dict) and (found := classify_record(record)):
            return found
    return None


def detect(source: Source, tried: tuple[str, ...]) -> str:
    """The format name of `source`, or a `TranscriptError` listing `tried`."""
    first = source.first_line()
    found = None
    if is_sse(source):
        found = _classify_sse(source)
    elif first.startswith(("{", "[")):
        document = whole_document(source)  # a broken document is an error here already
        found = classify_document(document) if document is not None else None
        if found is None:
            found = _classify_lines(source)
    if found is None:
        raise FormatNotRecognised(tried, file=source.file)
    return found
