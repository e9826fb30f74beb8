"""The `cline` format: Cline / Roo Code task files.

`api_conversation_history.json` is an array of Anthropic-style messages
(user: text -> user, tool_result -> tool_result; assistant: a turn with
thinking / reasoning -> reasoning, text -> content, tool_use -> tool_call).

`ui_messages.json` is an array of `say` / `ask` records: api_req_started ->
turn, task / user_feedback -> user, reasoning -> reasoning, text /
completion_result -> content, tool (JSON in `text`, its `tool` key names it)
/ command / use_mcp_server -> tool_call, command_output -> tool_result,
error -> warnings; other kinds are noted as skipped. O(n) in records.
"""

from __future__ import annotations

from .anthropic_messages import add_block, add_user_content
from .builder import TranscriptBuilder, as_dict, as_list
from .source import JSON_DECODER, Source, type_name
from .transcript import Transcript

NAME = "cline"
VERSION = "cline/1"

USER_SAYS = ("task", "user_feedback")
CONTENT_SAYS = ("text", "completion_result")


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    document = source.json_document()
    if not isinstance(document, list):
        raise source.error(f"not a Cline task file: expected an array of messages, got {type_name(document)}")
    if any(isinstance(item, dict) and ("say" in item or "ask" in item) for item in document):
        _ui_messages(builder, document)
    else:
        _api_history(builder, document)
    if not builder.events:
        raise source.error("no Cline messages found; is this the right format?")
    return builder.finish()


def _api_history(builder: TranscriptBuilder, messages: list) -> None:
    for number, message in enumerate(messages):
        message = as_dict(message)
        builder.at(message.get("ts"))
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            add_user_content(builder, content, None)
        elif role == "assistant":
            builder.add("turn")
            for block in [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content):
                block = as_dict(block)
                if block.get("type") == "reasoning":  # Roo Code stores reasoning as its own block
                    builder.text("reasoning", block.get("text"))
                else:
                    add_block(builder, block, None)
        else:
            builder.skip(None, f"[{number}] role {role}")


def _json_object(text: object) -> dict:
    """The object in a record's `text`, or {} when it holds none."""
    if not isinstance(text, str) or not text.startswith("{"):
        return {}
    try:
        return as_dict(JSON_DECODER.decode(text))
    except (ValueError, RecursionError):
        return {}


def _ui_messages(builder: TranscriptBuilder, records: list) -> None:
    for number, record in enumerate(records):
        record = as_dict(record)
        builder.at(record.get("ts"))
        kind = record.get("say") if record.get("type") == "say" else record.get("ask")
        text = record.get("text")
        if kind == "api_req_started":
            builder.add("turn")
        elif kind in USER_SAYS:
            builder.text("user", text)
        elif kind == "reasoning":
            builder.text("reasoning", text)
        elif kind in CONTENT_SAYS:
            builder.text("content", text)
        elif kind == "tool":
            args = _json_object(text)
            builder.add("tool_call", name=str(args.get("tool") or "tool"), args=args)
        elif kind == "command":
            builder.add("tool_call", name="execute_command", args={"command": text if isinstance(text, str) else ""})
        elif kind == "use_mcp_server":
            args = _json_object(text)
            builder.add(
                "tool_call", name=str(args.get("toolName") or args.get("serverName") or "use_mcp_server"), args=args
            )
        elif kind == "command_output":
            builder.add("tool_result", output=text if isinstance(text, str) else "")
        elif kind == "error":
            builder.warn(f"[{number}] error: {text}")
        else:
            builder.skip(None, f"[{number}] {record.get('type')} {kind}")
