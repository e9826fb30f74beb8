"""The `codex` format: OpenAI Codex CLI rollout JSON Lines
(`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Records used: `session_meta` (id, cwd, cli version), `turn_context`
(model), `response_item` with payload type `message` (user -> user,
assistant -> content; developer/system noted as skipped), `reasoning`
(summary text and reasoning_text content -> reasoning; encrypted_content is
never shown), `function_call` / `custom_tool_call` / `local_shell_call` /
`web_search_call` -> tool_call, `function_call_output` /
`custom_tool_call_output` -> tool_result. `event_msg` records repeat the
response items for the terminal UI and are skipped, except `error`
(-> warnings). Older rollouts without `payload` (response items as whole
lines) are read the same way. A `turn` starts at the first model output
after input (a user message or a tool output): one model request.
O(n) in records.
"""

from __future__ import annotations

from .builder import TranscriptBuilder, as_dict, as_list, output_text, require_str, tool_args
from .source import JSON_DECODER, Source
from .transcript import Transcript

NAME = "codex"
VERSION = "codex/1"

TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    reader = _Rollout(builder)
    used = 0
    for number, record in source.json_lines():
        kind = record.get("type")
        payload = record.get("payload")
        builder.at(record.get("timestamp"))
        if isinstance(payload, dict):
            used += reader.record(kind, payload, number)
        elif kind in (*TOOL_CALLS, *TOOL_OUTPUTS, "message", "reasoning"):
            used += reader.response_item(record, number)  # older rollouts: the item is the line
        elif number == 1 and "id" in record and "timestamp" in record:
            used += reader.session_meta(record)  # older rollouts: a bare header line
        elif isinstance(kind, str) or "record_type" in record:
            builder.skip(number, kind if isinstance(kind, str) else record["record_type"])
        else:
            raise source.error("not a Codex rollout record (no 'type' with a 'payload')", line=number, field="type")
    if not used:
        raise source.error("no Codex rollout records found; is this the right format?")
    return builder.finish()


class _Rollout:
    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.awaiting_model = True  # the next model output starts a turn

    def record(self, kind: object, payload: dict, line: int) -> int:
        """Handle one record; 1 if it was a Codex record type, else 0."""
        if kind == "session_meta":
            return self.session_meta(payload)
        if kind == "turn_context":
            self.builder.set_model(payload.get("model"))
            return 1
        if kind == "response_item":
            return self.response_item(payload, line)
        if kind == "event_msg":
            if payload.get("type") == "error":
                self.builder.warn(f"line {line}: error: {output_text(payload.get('message'))}")
            else:
                self.builder.skip(line, f"event_msg/{payload.get('type')}")
            return 1
        self.builder.skip(line, str(kind))
        return 1 if kind == "compacted" else 0

    def session_meta(self, meta: dict) -> int:
        builder = self.builder
        builder.session_id = require_str(meta.get("id"))
        builder.set_model(meta.get("model"))
        builder.meta.update(
            {
                key: meta[key]
                for key in ("cwd", "cli_version", "originator", "model_provider")
                if isinstance(meta.get(key), str)
            }
        )
        return 1

    def model_output(self) -> None:
        if self.awaiting_model:
            self.builder.add("turn")
            self.awaiting_model = False

    def response_item(self, item: dict, line: int) -> int:
        builder = self.builder
        kind = item.get("type")
        if kind == "message":
            text = output_text(
                [block for block in as_list(item.get("content")) if isinstance(as_dict(block).get("text"), str)]
            )
            if item.get("role") == "user":
                builder.text("user", text)
                self.awaiting_model = True
            elif item.get("role") == "assistant":
                self.model_output()
                builder.text("content", text)
            else:
                builder.skip(line, f"response_item/message/{item.get('role')}")
        elif kind == "reasoning":
            self.model_output()
            for part in [*as_list(item.get("summary")), *as_list(item.get("content"))]:
                builder.text("reasoning", as_dict(part).get("text"))
        elif kind in TOOL_CALLS:
            self.model_output()
            builder.add("tool_call", name=_tool_name(item), args=_tool_args(item), id=require_str(item.get("call_id")))
        elif kind in TOOL_OUTPUTS:
            output, ok = _tool_output(item.get("output"))
            builder.add("tool_result", id=require_str(item.get("call_id")), ok=ok, output=output)
            self.awaiting_model = True
        else:
            builder.skip(line, f"response_item/{kind}")
        return 1


def _tool_name(item: dict) -> str:
    kind = item["type"]
    if kind == "local_shell_call":
        return "local_shell"
    if kind == "web_search_call":
        return "web_search"
    return str(item.get("name") or "")


def _tool_args(item: dict) -> dict:
    kind = item["type"]
    if kind == "custom_tool_call":  # freeform input (apply_patch), not JSON
        return {"input": item.get("input")} if isinstance(item.get("input"), str) else tool_args(item.get("input"))
    if kind in ("local_shell_call", "web_search_call"):
        return as_dict(item.get("action"))
    return tool_args(item.get("arguments"))


def _tool_output(output: object) -> tuple[str, bool | None]:
    """A tool output's text and, when the rollout says, whether it succeeded:
    `{"content", "success"}` objects, or JSON text with metadata.exit_code."""
    if isinstance(output, dict):
        success = output.get("success")
        return output_text(output.get("content")), success if isinstance(success, bool) else None
    text = output_text(output)
    if text.startswith("{") and '"exit_code"' in text:
        try:
            exit_code = as_dict(as_dict(JSON_DECODER.decode(text)).get("metadata")).get("exit_code")
        except (ValueError, RecursionError):
            exit_code = None
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            return text, exit_code == 0
    return text, None
