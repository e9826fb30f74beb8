"""`POST /v1/chat/completions` (OpenAI Chat Completions and compatible
servers). A loop ends the stream with one more chunk whose choice 0 has an
empty delta and finish_reason LOOPGUARD_PROXY_FINISH_REASON, the detection
under `loopguard`, then `data: [DONE]`; a whole completion gets that
finish_reason on choice 0 and the `loopguard` member."""

from __future__ import annotations

import json

from django.conf import settings

from detector.importers import TranscriptBuilder, parse_bytes
from detector.importers.openai_chat import ChunkReader

from .services import ProxyApi, SseRecord, StreamEnding

DONE: SseRecord = (None, "[DONE]")


def openai_upstream() -> tuple[str | None, dict]:
    """The OpenAI-compatible upstream (chat completions and responses)."""
    key = settings.LOOPGUARD_UPSTREAM_KEY
    return settings.LOOPGUARD_UPSTREAM_URL, {"Authorization": f"Bearer {key}"} if key else {}


def openai_error_body(message: str, kind: str) -> dict:
    """An error as OpenAI SDKs read it."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class ChatEnding(StreamEnding):
    def __init__(self):
        self.last: dict = {}

    def seen(self, record: dict) -> None:
        self.last = record

    def records(self, loop: dict) -> list[SseRecord]:
        chunk = {
            "id": self.last.get("id"),
            "object": "chat.completion.chunk",
            "created": self.last.get("created"),
            "model": self.last.get("model"),
            "choices": [
                {"index": 0, "delta": {}, "logprobs": None, "finish_reason": settings.LOOPGUARD_PROXY_FINISH_REASON}
            ],
            "loopguard": loop,
        }
        return [(None, json.dumps(chunk)), DONE]


class ChatCompletions(ProxyApi):
    path = "chat/completions"
    source_format = "openai"

    def upstream(self) -> tuple[str | None, dict]:
        return openai_upstream()

    def error_body(self, message: str, kind: str) -> dict:
        return openai_error_body(message, kind)

    def reader(self, builder: TranscriptBuilder) -> ChunkReader:
        return ChunkReader(builder)

    def ending(self) -> ChatEnding:
        return ChatEnding()

    def whole_events(self, body: bytes) -> list[dict]:
        return parse_bytes(body, "completion.json", "openai").events[1:]  # without the session header

    def with_loop(self, answer: dict, loop: dict) -> dict:
        for choice in answer.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                choice["finish_reason"] = settings.LOOPGUARD_PROXY_FINISH_REASON
        return {**answer, "loopguard": loop}
