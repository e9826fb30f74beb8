"""The `claude-code` format: Claude Code session JSON Lines
(`~/.claude/projects/<project>/<session>.jsonl`).

Records used: `user` (text -> user, tool_result blocks -> tool_result with
ok = not is_error), `assistant` (thinking -> reasoning, text -> content,
tool_use -> tool_call; records sharing one message.id are one turn;
message.model; stop_reason -> finish at the end of the turn), `summary` and
`custom-title` (the title). Every other record type (system, attachment,
progress, queue-operation, file-history-snapshot, permission-mode, ...) is
listed in `skipped`. Events of sidechain records carry `isSidechain: true`.
O(n) in records.
"""

from __future__ import annotations

from .anthropic_messages import add_block, add_user_content, finish_reason
from .builder import TranscriptBuilder, as_dict, as_list, require_str
from .source import Source
from .transcript import Transcript

NAME = "claude-code"
VERSION = "claude-code/1"
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's model name for messages it made up itself


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    turn = _Turn(builder)
    summary = None
    used = 0
    for number, record in source.json_lines():
        kind = record.get("type")
        if not isinstance(kind, str):
            raise source.error("not a Claude Code record (no 'type')", line=number, field="type")
        if builder.session_id is None:
            builder.session_id = require_str(record.get("sessionId"))
        if kind in ("assistant", "user"):
            if kind == "user":
                turn.close()
            builder.at(record.get("timestamp"))
            builder.extra = {"isSidechain": True} if record.get("isSidechain") is True else {}
            if kind == "assistant":
                turn.assistant(as_dict(record.get("message")), number)
            else:
                add_user_content(builder, as_dict(record.get("message")).get("content"), number)
        elif kind == "summary" and summary is None:
            summary = require_str(record.get("summary"))
        elif kind == "custom-title":
            builder.title = require_str(record.get("customTitle")) or builder.title
        else:
            builder.skip(number, kind if kind != "system" else f"system/{record.get('subtype')}")
            continue
        used += 1
    turn.close()
    if not used:
        raise source.error("no Claude Code user, assistant or summary records found; is this the right format?")
    builder.title = builder.title or summary
    return builder.finish()


class _Turn:
    """The assistant turn being read: Claude Code writes one API response as
    several records (one per content block) that share message.id, and may
    write a tool's result before the response's next block: a record with
    the last turn's id continues that turn."""

    def __init__(self, builder: TranscriptBuilder):
        self.builder = builder
        self.message_id: str | None = None
        self.stop_reason: str | None = None
        self.open = False
        self.stamp: tuple = (None, {})  # time and extra fields of the turn's last record

    def assistant(self, message: dict, line: int) -> None:
        builder = self.builder
        message_id = require_str(message.get("id"))
        if message_id is None or message_id != self.message_id:
            self.close()
            builder.add("turn")
            self.message_id = message_id
        self.open = True
        if message.get("model") != SYNTHETIC_MODEL:
            builder.set_model(message.get("model"))
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content):
            add_block(builder, as_dict(block), line)
        self.stop_reason = require_str(message.get("stop_reason")) or self.stop_reason
        self.stamp = (builder.time, builder.extra)

    def close(self) -> None:
        """End the open turn with its finish event, if its records gave a stop reason."""
        if self.open and self.stop_reason:
            builder = self.builder
            now = (builder.time, builder.extra)
            builder.time, builder.extra = self.stamp
            builder.add("finish", reason=finish_reason(self.stop_reason))
            builder.time, builder.extra = now
        self.open = False
        self.stop_reason = None
