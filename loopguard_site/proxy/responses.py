"""`POST /v1/responses` (OpenAI Responses), forwarded to the OpenAI-compatible
upstream of `/v1/chat/completions`. A loop ends the stream as a response cut
short ends: for each output item still open, its text part closed
(`response.output_text.done`, `response.content_part.done`, holding the text
relayed) and `response.output_item.done` with status `incomplete`; then
`response.incomplete`, whose response has status `incomplete`,
`incomplete_details.reason` LOOPGUARD_PROXY_FINISH_REASON, the output so
far, and the detection under `loopguard`. Sequence numbers go on from the
upstream's. A whole response gets that status and reason and the
`loopguard` member."""

from __future__ import annotations

import copy
import json

from django.conf import settings

from detector.importers import Source, TranscriptBuilder, TranscriptError, as_dict
from detector.importers.openai_responses import EventReader, add_response

from .chat_completions import openai_error_body, openai_upstream
from .services import ProxyApi, SseRecord, StreamEnding


def incomplete(response: dict) -> dict:
    """`response` marked cut short by LoopGuard."""
    reason = settings.LOOPGUARD_PROXY_FINISH_REASON
    return {**response, "status": "incomplete", "incomplete_details": {"reason": reason}}


class ResponsesEnding(StreamEnding):
    def __init__(self):
        self.response: dict = {}  # the last snapshot the upstream sent
        self.items: dict[int, dict] = {}  # output_index -> the item as relayed so far
        self.open: list[int] = []  # output indexes added and not done
        self.sequence = 0

    def seen(self, record: dict) -> None:
        kind = record.get("type")
        if isinstance(record.get("sequence_number"), int):
            self.sequence = record["sequence_number"]
        index = record.get("output_index")
        if kind in ("response.created", "response.in_progress"):
            self.response = as_dict(record.get("response"))
        elif kind == "response.output_item.added" and isinstance(index, int):
            self.items[index] = copy.deepcopy(as_dict(record.get("item")))
            self.open.append(index)
        elif kind == "response.output_item.done" and isinstance(index, int):
            self.items[index] = as_dict(record.get("item"))
            if index in self.open:
                self.open.remove(index)
        elif kind == "response.content_part.added" and index in self.items:
            self.items[index].setdefault("content", []).append(copy.deepcopy(as_dict(record.get("part"))))
        elif kind == "response.output_text.delta" and index in self.items:
            parts = self.items[index].get("content") or []
            if parts and isinstance(record.get("delta"), str):
                parts[-1]["text"] = parts[-1].get("text", "") + record["delta"]

    def _event(self, kind: str, **fields) -> SseRecord:
        self.sequence += 1
        return kind, json.dumps({"type": kind, "sequence_number": self.sequence, **fields})

    def records(self, loop: dict) -> list[SseRecord]:
        ending = []
        for index in self.open:
            item = self.items[index]
            for number, part in enumerate(item.get("content") or []):
                where = {"item_id": item.get("id"), "output_index": index, "content_index": number}
                if part.get("type") == "output_text":
                    ending.append(self._event("response.output_text.done", **where, text=part.get("text", "")))
                ending.append(self._event("response.content_part.done", **where, part=part))
            item["status"] = "incomplete"
            ending.append(self._event("response.output_item.done", output_index=index, item=item))
        output = [self.items[index] for index in sorted(self.items)]
        response = {**incomplete(self.response), "output": output}
        ending.append(self._event("response.incomplete", response=response, loopguard=loop))
        return ending


class Responses(ProxyApi):
    path = "responses"
    source_format = "openai-responses"

    def upstream(self) -> tuple[str | None, dict]:
        return openai_upstream()

    def error_body(self, message: str, kind: str) -> dict:
        return openai_error_body(message, kind)

    def reader(self, builder: TranscriptBuilder) -> EventReader:
        return EventReader(builder)

    def ending(self) -> ResponsesEnding:
        return ResponsesEnding()

    def whole_events(self, body: bytes) -> list[dict]:
        try:
            response = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise TranscriptError(f"not JSON: {exc}", file="response.json") from exc
        if not isinstance(response, dict) or response.get("object") != "response":
            raise TranscriptError("not a Responses API response (no object 'response')", file="response.json")
        builder = TranscriptBuilder(Source("response.json", ""), self.source_format, "")
        add_response(builder, response)
        return builder.events

    def with_loop(self, answer: dict, loop: dict) -> dict:
        return {**incomplete(answer), "loopguard": loop}
