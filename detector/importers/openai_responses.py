"""OpenAI Responses API output as events: a whole `response` object
(`add_response`), or its stream events one at a time (`EventReader`), for
the lab's `/v1/responses` proxy.

Items used: `message` (output_text and refusal parts -> content),
`reasoning` (summary and reasoning_text parts -> reasoning; encrypted
content is never text), `function_call` / `custom_tool_call` -> tool_call
(when the item is done: its arguments are complete then). The response's
status gives the finish: completed -> stop (tool_calls when it called
tools), incomplete -> its reason (max_output_tokens -> length), failed ->
error. Stream events used: response.created (a turn), the text deltas
(output_text, refusal, reasoning_summary_text, reasoning_text),
output_item.done, the terminal response.completed / incomplete / failed,
and error (-> warnings). O(n) in events.
"""

from __future__ import annotations

from .builder import TranscriptBuilder, as_dict, as_list, output_text, require_str, tool_args

TOOL_CALLS = ("function_call", "custom_tool_call")
INCOMPLETE_REASONS = {"max_output_tokens": "length"}
TEXT_DELTAS = {
    "response.output_text.delta": "content",
    "response.refusal.delta": "content",
    "response.reasoning_summary_text.delta": "reasoning",
    "response.reasoning_text.delta": "reasoning",
}
TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def finish_reason(response: dict, called_tools: bool) -> str | None:
    """The contract's finish reason for a response's status, None while it runs."""
    status = response.get("status")
    if status == "completed":
        return "tool_calls" if called_tools else "stop"
    if status == "incomplete":
        reason = as_dict(response.get("incomplete_details")).get("reason")
        return INCOMPLETE_REASONS.get(reason, require_str(reason) or "incomplete")
    if status in ("failed", "cancelled"):
        return "error" if status == "failed" else "cancelled"
    return None


def add_tool_call(builder: TranscriptBuilder, item: dict) -> None:
    arguments = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
    args = tool_args(arguments) if item.get("type") == "function_call" else {"input": arguments}
    builder.add("tool_call", name=str(item.get("name") or ""), args=args, id=require_str(item.get("call_id")))


def add_item(builder: TranscriptBuilder, item: dict) -> None:
    """One complete output item of a whole response."""
    kind = item.get("type")
    if kind == "message":
        for part in map(as_dict, as_list(item.get("content"))):
            builder.text("content", part.get("text") if part.get("type") == "output_text" else part.get("refusal"))
    elif kind == "reasoning":
        for part in [*as_list(item.get("summary")), *as_list(item.get("content"))]:
            builder.text("reasoning", as_dict(part).get("text"))
    elif kind in TOOL_CALLS:
        add_tool_call(builder, item)
    else:
        builder.skip(None, f"output item {kind}")


def add_response(builder: TranscriptBuilder, response: dict) -> None:
    """A whole (not streamed) response: a turn, its output, its finish."""
    builder.set_model(response.get("model"))
    builder.add("turn")
    items = [as_dict(item) for item in as_list(response.get("output"))]
    for item in items:
        add_item(builder, item)
    reason = finish_reason(response, any(item.get("type") in TOOL_CALLS for item in items))
    if reason:
        builder.add("finish", reason=reason)


class EventReader:
    """Responses stream events, one at a time, as events on `builder`."""

    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.called_tools = False

    def feed(self, event: dict, number: int | None = None) -> None:
        builder = self.builder
        kind = event.get("type")
        if kind in TEXT_DELTAS:
            builder.text(TEXT_DELTAS[kind], event.get("delta"))
        elif kind == "response.created":
            builder.set_model(as_dict(event.get("response")).get("model"))
            builder.add("turn")
            self.called_tools = False
        elif kind == "response.output_item.done" and as_dict(event.get("item")).get("type") in TOOL_CALLS:
            add_tool_call(builder, as_dict(event["item"]))
            self.called_tools = True
        elif kind in TERMINAL:
            reason = finish_reason(as_dict(event.get("response")), self.called_tools)
            if reason:
                builder.add("finish", reason=reason)
        elif kind == "error":
            builder.warn(f"line {number}: error: {output_text(event.get('message'))}")
        else:
            builder.skip(number, kind)

    def close(self) -> None:
        """Nothing is pending: tool calls are emitted whole, when their item is done."""
