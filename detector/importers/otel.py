"""The `otel` format: OpenTelemetry spans of LLM calls, as a JSON list of
spans (the JS / Python SDK exporters' shape), an OTLP JSON document
(`resourceSpans` / `scopeSpans`), or JSON Lines of either (the collector's
file exporter).

Spans are ordered by start time. An LLM-call span (GenAI `gen_ai.*`
attributes, OpenInference `llm.*` / span kind LLM, Vercel AI SDK `ai.*`
doGenerate / doStream) gives: a turn; user messages at the end of its input
messages (the prompt of this request); reasoning; output text; tool calls;
its finish reason. A tool span (`execute_tool`, OpenInference TOOL,
`ai.toolCall`) gives a tool_result (ok unless the span's status is ERROR),
preceded by its tool_call when no LLM span reported that call (matched by
id, or by name when ids are missing). Other spans
(agent, chain, the Vercel outer spans that repeat their doStream child) are
noted as skipped. O(spans x attributes).
"""

from __future__ import annotations

from .builder import TranscriptBuilder, as_dict, as_list, epoch_seconds, output_text, require_str, tool_args
from .source import JSON_DECODER, Source, type_name
from .stream import whole_document
from .transcript import Transcript

NAME = "otel"
VERSION = "otel/1"

STATUS_ERROR = (2, "STATUS_CODE_ERROR", "ERROR")
LLM_OPERATIONS_EXCLUDED = ("execute_tool", "embeddings", "create_agent", "invoke_agent")
VERCEL_CALLS = (
    "ai.generateText.doGenerate",
    "ai.streamText.doStream",
    "ai.generateObject.doGenerate",
    "ai.streamObject.doStream",
)
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.response.model", "ai.model.id")


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    document = whole_document(source)
    documents = [(None, document)] if document is not None else list(source.json_lines())
    spans = []
    for line, document in documents:
        spans.extend(document_spans(source, document, line))
    if not spans:
        raise source.error("no OpenTelemetry spans found; is this the right format?")
    reader = SpanReader(builder)
    for span in by_start(spans):
        reader.feed(span)
    return builder.finish()


def by_start(spans: list[dict]) -> list[dict]:
    """Spans (as `document_spans` gives them) in the order their events go: by start time."""
    return sorted(spans, key=lambda span: span["start"] if span["start"] is not None else float("-inf"))


class SpanReader:
    """Spans, one at a time in start order, as events on `builder`: the
    importer, and the lab's OTLP receiver, which feeds the spans of one trace
    as its exports arrive. `unanswered`: the (id, name) of tool calls LLM
    spans reported that no tool span answered yet (a list of pairs, JSON-able,
    so a receiver can keep it between exports)."""

    def __init__(self, builder: TranscriptBuilder, unanswered: list | None = None):
        self.builder = builder
        self.unanswered: list = unanswered if unanswered is not None else []

    def feed(self, span: dict) -> None:
        builder = self.builder
        builder.time = span["start"]
        if _is_tool(span["attrs"]):
            _tool_span(builder, span, self.unanswered)
        elif _is_llm(span["attrs"]):
            _llm_span(builder, span["attrs"], self.unanswered)
        else:
            builder.skip(span["line"], f"span {span['name']}")


# ---- reading spans -------------------------------------------------------


def document_spans(source: Source, document: object, line: int | None = None) -> list[dict]:
    """The spans of one document (a span, a list of spans, OTLP resourceSpans),
    each as `{"name", "line", "start", "attrs", "error", "trace", "root"}`."""
    if isinstance(document, list):
        return [span for item in document for span in document_spans(source, item, line)]
    if not isinstance(document, dict):
        raise source.error(f"not OpenTelemetry spans: got {type_name(document)}", line=line)
    if "resourceSpans" in document or "scopeSpans" in document or "spans" in document:
        found = []
        for resource in as_list(document.get("resourceSpans")) or [document]:
            resource = as_dict(resource)
            scopes = as_list(resource.get("scopeSpans")) + as_list(resource.get("instrumentationLibrarySpans")) or [
                resource
            ]
            for scope in scopes:
                found.extend(_span(as_dict(span), line) for span in as_list(as_dict(scope).get("spans")))
        return found
    if "attributes" in document or "name" in document:
        return [_span(document, line)]
    raise source.error("not an OpenTelemetry span (no 'attributes' or 'name')", line=line)


def _span(span: dict, line: int | None) -> dict:
    attrs = _attributes(span.get("attributes"))
    for event in as_list(span.get("events")):  # older GenAI conventions put content in span events
        event = as_dict(event)
        if str(event.get("name", "")).startswith("gen_ai.content."):
            for key, value in _attributes(event.get("attributes")).items():
                attrs.setdefault(key, value)
    status = as_dict(span.get("status"))
    return {
        "name": str(span.get("name")),
        "line": line,
        "start": _start_time(span),
        "attrs": attrs,
        "error": status.get("code") in STATUS_ERROR or status.get("status_code") in STATUS_ERROR,
        "trace": str(span.get("traceId") or ""),  # OTLP's ids; the receiver groups spans by trace
        "root": not span.get("parentSpanId"),
    }


def _small_int(value: object) -> int | None:
    """An integer (or its decimal text) of at most 30 digits, else None:
    times and indices beyond that are junk, and would overflow a float."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(text, str) and text.isascii() and text.lstrip("-").isdigit() and len(text) <= 30:
        return int(text)
    return None


def _start_time(span: dict) -> float | None:
    start = span.get("startTime", span.get("start_time"))
    if isinstance(start, list) and len(start) == 2:  # [seconds, nanoseconds] (JS SDK)
        seconds, nanos = _small_int(start[0]), _small_int(start[1])
        return epoch_seconds(seconds + nanos / 1e9) if seconds is not None and nanos is not None else None
    nanos = _small_int(span.get("startTimeUnixNano"))
    if nanos is not None:
        return epoch_seconds(nanos / 1e9)
    return epoch_seconds(start)


def _any_value(value: object) -> object:
    """An OTLP AnyValue as a plain value."""
    value = as_dict(value)
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        number = _small_int(value["intValue"])  # OTLP JSON writes 64-bit integers as text
        return number if number is not None else value["intValue"]
    if "arrayValue" in value:
        return [_any_value(item) for item in as_list(as_dict(value["arrayValue"]).get("values"))]
    if "kvlistValue" in value:
        return _attributes(as_dict(value["kvlistValue"]).get("values"))
    return None


def _attributes(raw: object) -> dict:
    """Span attributes as a flat dict, from a dict or an OTLP key/value list."""
    if isinstance(raw, dict):
        return dict(raw)
    return {str(item.get("key")): _any_value(item.get("value")) for item in map(as_dict, as_list(raw))}


def _indexed(attrs: dict, prefix: str) -> list[dict]:
    """Flattened list attributes (`prefix.0.role`, `prefix.0.content`, ...)
    as a list of dicts keyed by the rest of the name."""
    groups: dict[int, dict] = {}
    for key, value in attrs.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix) :].partition(".")
            number = _small_int(index)
            if number is not None and number >= 0 and rest:
                groups.setdefault(number, {})[rest] = value
    return [groups[index] for index in sorted(groups)]


def _json(value: object) -> object:
    """A value that may be JSON text, parsed; None when it is neither."""
    if isinstance(value, str):
        try:
            return JSON_DECODER.decode(value)
        except (ValueError, RecursionError):
            return None
    return value


# ---- span kinds ----------------------------------------------------------


def _is_tool(attrs: dict) -> bool:
    return (
        attrs.get("gen_ai.operation.name") == "execute_tool"
        or attrs.get("openinference.span.kind") == "TOOL"
        or attrs.get("ai.operationId") == "ai.toolCall"
    )


def _is_llm(attrs: dict) -> bool:
    if attrs.get("ai.operationId") is not None:
        return attrs["ai.operationId"] in VERCEL_CALLS
    if attrs.get("openinference.span.kind") == "LLM" or "llm.model_name" in attrs:
        return True
    gen_ai = any(
        key in attrs
        for key in ("gen_ai.system", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model")
    )
    return gen_ai and attrs.get("gen_ai.operation.name") not in LLM_OPERATIONS_EXCLUDED


# ---- messages ------------------------------------------------------------


def _part_text(content: object) -> str:
    """Text of message content: a string or a list of parts."""
    if isinstance(content, str):
        return content
    texts = []
    for part in as_list(content):
        part = as_dict(part)
        if part.get("type", "text") == "text":
            text = part.get("text", part.get("content"))
            texts.append(text if isinstance(text, str) else "")
    return "".join(texts)


def _input_messages(attrs: dict) -> list[tuple[str, str]]:
    """(role, text) of the request's input messages, from whichever
    convention the span follows."""
    messages = (
        _json(attrs.get("gen_ai.input.messages"))
        or _json(attrs.get("gen_ai.prompt"))
        or _json(attrs.get("ai.prompt.messages"))
    )
    if isinstance(_json(attrs.get("ai.prompt")), dict) and not messages:
        prompt = as_dict(_json(attrs["ai.prompt"]))
        messages = prompt.get("messages") or [{"role": "user", "content": prompt.get("prompt")}]
    if isinstance(messages, list):
        return [
            (str(as_dict(m).get("role")), _part_text(as_dict(m).get("parts", as_dict(m).get("content"))))
            for m in messages
        ]
    flat = _indexed(attrs, "gen_ai.prompt.")
    if flat:
        return [(str(m.get("role")), output_text(m.get("content"))) for m in flat]
    return [
        (str(m.get("message.role")), output_text(m.get("message.content", "")))
        for m in _indexed(attrs, "llm.input_messages.")
    ]


def _output(attrs: dict) -> dict:
    """reasoning, text, tool_calls [(id, name, args)] and finish of the response."""
    out = {"reasoning": "", "text": "", "tool_calls": [], "finish": None}
    messages = _json(attrs.get("gen_ai.output.messages"))
    if isinstance(messages, list):
        for message in map(as_dict, messages):
            out["finish"] = out["finish"] or require_str(message.get("finish_reason"))
            for part in map(as_dict, as_list(message.get("parts"))):
                if part.get("type") in ("reasoning", "thinking"):
                    out["reasoning"] += output_text(part.get("content"))
                elif part.get("type") == "text":
                    out["text"] += output_text(part.get("content"))
                elif part.get("type") == "tool_call":
                    out["tool_calls"].append((part.get("id"), part.get("name"), part.get("arguments")))
        return out
    for completion in _indexed(attrs, "gen_ai.completion."):
        out["text"] += output_text(completion.get("content", ""))
        out["finish"] = out["finish"] or require_str(completion.get("finish_reason"))
        for call in _indexed(completion, "tool_calls."):
            out["tool_calls"].append((call.get("id"), call.get("name"), call.get("arguments")))
    for message in _indexed(attrs, "llm.output_messages."):
        out["text"] += output_text(message.get("message.content", ""))
        for call in _indexed(message, "message.tool_calls."):
            name, arguments = call.get("tool_call.function.name"), call.get("tool_call.function.arguments")
            out["tool_calls"].append((call.get("tool_call.id"), name, arguments))
    if isinstance(attrs.get("ai.response.reasoning"), str):
        out["reasoning"] += attrs["ai.response.reasoning"]
    if isinstance(attrs.get("ai.response.text"), str) and not out["text"]:
        out["text"] = attrs["ai.response.text"]
    for call in map(as_dict, as_list(_json(attrs.get("ai.response.toolCalls")))):
        out["tool_calls"].append((call.get("toolCallId"), call.get("toolName"), call.get("args", call.get("input"))))
    return out


def _finish_reason(attrs: dict, out: dict) -> str | None:
    reasons = _json(attrs.get("gen_ai.response.finish_reasons"))
    if isinstance(reasons, list) and reasons and isinstance(reasons[0], str):
        return reasons[0]
    return require_str(reasons) or require_str(attrs.get("ai.response.finishReason")) or out["finish"]


def llm_model(span: dict) -> str | None:
    """The model an LLM-call span names (None for other spans)."""
    attrs = span["attrs"]
    if _is_tool(attrs) or not _is_llm(attrs):
        return None
    return next((attrs[key] for key in MODEL_KEYS if require_str(attrs.get(key))), None)


def _llm_span(builder: TranscriptBuilder, attrs: dict, unanswered: list) -> None:
    builder.set_model(llm_model({"attrs": attrs}))
    prompt = []
    for role, text in reversed(_input_messages(attrs)):
        if role != "user":
            break
        prompt.append(text)
    for text in reversed(prompt):
        builder.text("user", text)
    builder.add("turn")
    out = _output(attrs)
    builder.text("reasoning", out["reasoning"])
    builder.text("content", out["text"])
    for call_id, name, arguments in out["tool_calls"]:
        call_id, name = require_str(call_id), str(name or "")
        unanswered.append((call_id, name))
        builder.add("tool_call", name=name, args=tool_args(arguments), id=call_id)
    reason = _finish_reason(attrs, out)
    if reason:
        builder.add("finish", reason=reason)


def _tool_span(builder: TranscriptBuilder, span: dict, unanswered: list) -> None:
    attrs = span["attrs"]
    call_id = (
        require_str(attrs.get("gen_ai.tool.call.id"))
        or require_str(attrs.get("ai.toolCall.id"))
        or require_str(attrs.get("tool_call.id"))
    )
    name = str(attrs.get("gen_ai.tool.name") or attrs.get("ai.toolCall.name") or attrs.get("tool.name") or span["name"])
    # the LLM span's call this span answers: by id, or by name when ids are missing
    match = next((c for c in unanswered if (c[0] == call_id if call_id and c[0] else c[1] == name)), None)
    if match is not None:
        unanswered.remove(match)
    else:
        arguments = attrs.get("gen_ai.tool.call.arguments", attrs.get("ai.toolCall.args", attrs.get("input.value")))
        builder.add("tool_call", name=name, args=tool_args(arguments), id=call_id)
    result = attrs.get("gen_ai.tool.call.result", attrs.get("ai.toolCall.result", attrs.get("output.value")))
    builder.add("tool_result", id=call_id, ok=not span["error"], output=output_text(result))
