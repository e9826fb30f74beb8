"""`POST /v1/messages` (Anthropic Messages), forwarded to
LOOPGUARD_ANTHROPIC_UPSTREAM_URL with LOOPGUARD_ANTHROPIC_UPSTREAM_KEY as
`x-api-key` (the client's `anthropic-version` and `anthropic-beta` passed
on). The client's LoopGuard token comes as its API key (`x-api-key`) or a
bearer token. A loop ends the stream as Anthropic ends a message: a
`content_block_stop` for each block still open, a `message_delta` whose
stop_reason is LOOPGUARD_PROXY_FINISH_REASON (the detection under
`loopguard`), then `message_stop`; a whole message gets that stop_reason
and the `loopguard` member."""

from __future__ import annotations

import json

from django.conf import settings

from detector.importers import TranscriptBuilder, as_dict, parse_bytes
from detector.importers.anthropic_messages import EventReader

from .services import ProxyApi, SseRecord, StreamEnding

ERROR_TYPES = {"auth_error": "authentication_error", "server_error": "api_error"}  # from the OpenAI names


class MessagesEnding(StreamEnding):
    def __init__(self):
        self.open_blocks: list = []  # indexes of blocks started and not stopped
        self.output_tokens = 0

    def seen(self, record: dict) -> None:
        kind = record.get("type")
        if kind == "content_block_start":
            self.open_blocks.append(record.get("index"))
        elif kind == "content_block_stop" and record.get("index") in self.open_blocks:
            self.open_blocks.remove(record.get("index"))
        usage = as_dict(as_dict(record.get("message")).get("usage") or record.get("usage"))
        if isinstance(usage.get("output_tokens"), int):
            self.output_tokens = usage["output_tokens"]

    def records(self, loop: dict) -> list[SseRecord]:
        ending = [{"type": "content_block_stop", "index": index} for index in self.open_blocks]
        ending.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": settings.LOOPGUARD_PROXY_FINISH_REASON, "stop_sequence": None},
                "usage": {"output_tokens": self.output_tokens},
                "loopguard": loop,
            }
        )
        ending.append({"type": "message_stop"})
        return [(record["type"], json.dumps(record)) for record in ending]


class Messages(ProxyApi):
    path = "messages"
    source_format = "anthropic"
    key_headers = ("x-api-key", "Authorization")

    def upstream(self) -> tuple[str | None, dict]:
        key = settings.LOOPGUARD_ANTHROPIC_UPSTREAM_KEY
        return settings.LOOPGUARD_ANTHROPIC_UPSTREAM_URL, {"x-api-key": key} if key else {}

    def forwarded_headers(self) -> tuple[str, ...]:
        return ("anthropic-version", "anthropic-beta")

    def error_body(self, message: str, kind: str) -> dict:
        return {"type": "error", "error": {"type": ERROR_TYPES.get(kind, kind), "message": message}}

    def reader(self, builder: TranscriptBuilder) -> EventReader:
        return EventReader(builder)

    def ending(self) -> MessagesEnding:
        return MessagesEnding()

    def whole_events(self, body: bytes) -> list[dict]:
        return parse_bytes(body, "message.json", "anthropic").events[1:]  # without the session header

    def with_loop(self, answer: dict, loop: dict) -> dict:
        return {**answer, "stop_reason": settings.LOOPGUARD_PROXY_FINISH_REASON, "loopguard": loop}
