"""The `gemini-cli` format: Gemini CLI chat recordings
(`~/.gemini/tmp/<project>/chats/session-*.json` and the newer `.jsonl`).

The JSON form is one object with `messages`. The JSONL form is an upsert
log: a header line, message records (a record whose id was seen before
replaces that message in place), `{"$set": {...}}` metadata patches (a
patched `messages` list is upserted the same way, never deleting: a
compressed history must not hide what the session did) and
`{"$rewindTo": id}` (drops that message and all after it).

Messages: `user` -> user; `gemini` -> turn, thoughts ("subject: description")
-> reasoning, content -> content, toolCalls -> tool_call then tool_result
(ok = status "success"; output from functionResponse.response output or
error); `error` / `warning` -> warnings; `info` and other types are noted as
skipped. O(n) in messages (upserts keep a dict of positions).
"""

from __future__ import annotations

from .builder import TranscriptBuilder, as_dict, as_list, output_text, require_str
from .source import Source
from .stream import whole_document
from .transcript import Transcript

NAME = "gemini-cli"
VERSION = "gemini-cli/1"


def parse(source: Source) -> Transcript:
    builder = TranscriptBuilder(source, NAME, VERSION)
    document = whole_document(source)
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        _header(builder, document)
        messages = [(None, message) for message in document["messages"]]
    elif document is None or isinstance(document, dict):  # JSONL, maybe a lone header line
        messages = _replay(builder, source)
    else:
        raise source.error("not a Gemini CLI session: expected an object with 'messages'", field="messages")
    for line, message in messages:
        _message(builder, as_dict(message), line)
    return builder.finish()


def _header(builder: TranscriptBuilder, header: dict) -> None:
    builder.session_id = require_str(header.get("sessionId")) or builder.session_id
    builder.title = require_str(header.get("summary")) or builder.title
    builder.meta.update(
        {key: header[key] for key in ("projectHash", "startTime", "kind") if isinstance(header.get(key), str)}
    )


def _replay(builder: TranscriptBuilder, source: Source) -> list[tuple[int, dict]]:
    """The messages a JSONL recording ends with, each with its line."""
    messages: dict[str, tuple[int, dict]] = {}  # insertion order is the message order

    def upsert(line: int, message: object) -> None:
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            messages[message["id"]] = (line, message)

    for number, record in source.json_lines():
        if "$set" in record:
            patch = as_dict(record["$set"])
            _header(builder, patch)
            for message in as_list(patch.get("messages")):
                upsert(number, message)
        elif "$rewindTo" in record:
            target = record["$rewindTo"]
            if isinstance(target, str) and target in messages:
                ids = list(messages)
                for message_id in ids[ids.index(target) :]:
                    del messages[message_id]
            else:
                builder.warn(f"line {number}: $rewindTo names an unknown message {target!r}; ignored")
        elif isinstance(record.get("id"), str) and "type" in record:
            upsert(number, record)
        elif "sessionId" in record:
            _header(builder, record)
            for message in as_list(record.get("messages")):
                upsert(number, message)
        else:
            raise source.error("not a Gemini CLI record (no message id, '$set' or session header)", line=number)
    return list(messages.values())


def _text(content: object) -> str:
    """Message content: a string or a list of parts with text."""
    if isinstance(content, list):
        return "".join(as_dict(part)["text"] for part in content if isinstance(as_dict(part).get("text"), str))
    return content if isinstance(content, str) else ""


def _message(builder: TranscriptBuilder, message: dict, line: int | None) -> None:
    kind = message.get("type")
    builder.at(message.get("timestamp"))
    if kind == "user":
        builder.text("user", _text(message.get("content")))
    elif kind == "gemini":
        builder.set_model(message.get("model"))
        builder.add("turn")
        for thought in as_list(message.get("thoughts")):
            thought = as_dict(thought)
            parts = [
                text for text in (thought.get("subject"), thought.get("description")) if isinstance(text, str) and text
            ]
            builder.text("reasoning", ": ".join(parts))
        builder.text("content", _text(message.get("content")))
        calls = [as_dict(call) for call in as_list(message.get("toolCalls"))]
        for call in calls:
            builder.add(
                "tool_call",
                name=str(call.get("name") or ""),
                args=as_dict(call.get("args")),
                id=require_str(call.get("id")),
            )
        for call in calls:
            builder.add(
                "tool_result",
                id=require_str(call.get("id")),
                ok=call.get("status") == "success",
                output=_tool_output(call),
            )
    elif kind in ("error", "warning"):
        builder.warn(f"{_where(line, message)}: {kind}: {_text(message.get('content'))}")
    else:
        builder.skip(line, f"message {kind}")


def _where(line: int | None, message: dict) -> str:
    return f"line {line}" if line is not None else f"message {message.get('id')}"


def _tool_output(call: dict) -> str:
    """What the tool returned: the functionResponse outputs (or errors), else
    the text the CLI displayed."""
    pieces = []
    for result in as_list(call.get("result")):
        response = as_dict(as_dict(as_dict(result).get("functionResponse")).get("response"))
        for key in ("output", "error"):
            if key in response:
                pieces.append(output_text(response[key]))
    if pieces:
        return "\n".join(pieces)
    return output_text(call.get("resultDisplay"))
