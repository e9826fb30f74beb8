"""The OpenAI-compatible proxy: `POST /v1/chat/completions` forwarded to
LOOPGUARD_UPSTREAM_URL with LOOPGUARD_UPSTREAM_KEY (never the caller's key),
and recorded as a live session of the caller through the live app's one
ingest (`live_ingest`, each message checked by `parse_message` first).

Streaming: a task reads the upstream's server-sent events into a bounded
queue (a slow client or ingest slows the upstream read instead of filling
memory). The relay takes whatever has arrived as one ingest message, then
forwards those chunks, each chunk's data unchanged: one ingest round trip
per batch however fast the chunks come, and no chunk reaches the client
before its events were checked. When the ingest answers a stop-level
detection, the chunks up to the one whose events fired it (`event_seq`) are
forwarded, then a last chunk with finish_reason LOOPGUARD_PROXY_FINISH_REASON
(and the detection under `loopguard`) and `data: [DONE]`; the upstream is
closed, and the client's text ends at the detection's `at`. The session
stays `stopped`; a stream that ends normally closes its session.

Not streaming: the whole completion is recorded as one message (the openai
importer reads it) and choice 0's finish_reason is replaced when a
stop-level loop is found.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings

from detector.importers import TranscriptError, parse_bytes
from detector.importers.builder import TranscriptBuilder
from detector.importers.openai_chat import NAME, VERSION, ChunkReader
from detector.importers.source import Source
from detector.json_depth import json_depth_problem
from detector.loop_signal import STOP_ACTIONS, first_stop
from loopguard_site.accounts.models import Project
from loopguard_site.live.protocol import ProtocolError, parse_message
from loopguard_site.live.services import live_ingest, live_session_close
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_live

logger = logging.getLogger(__name__)

QUEUE_CHUNKS = 256  # upstream chunks read ahead of the relay at most
UPSTREAM_TIMEOUT = httpx.Timeout(600.0, connect=10.0)  # a reasoning model may think for minutes between chunks
DONE = b"data: [DONE]\n\n"
_END = object()  # the upstream stream ended


class ProxyError(Exception):
    """A request the proxy cannot serve, answered as an OpenAI error body."""

    def __init__(
        self, message: str, *, status: int, kind: str = "invalid_request_error", retry_after: int | None = None
    ):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after  # seconds, for a 429


def error_body(message: str, kind: str) -> dict:
    """An error as OpenAI SDKs read it."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def request_completion(body: bytes) -> dict:
    """The caller's request body, checked as far as the proxy needs it."""
    if problem := json_depth_problem(body, settings.LOOPGUARD_MAX_JSON_DEPTH):
        raise ProxyError(f"{problem} (LOOPGUARD_MAX_JSON_DEPTH)", status=400)
    try:
        request = json.loads(body or b"null")
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProxyError(f"the body is not valid JSON: {exc}", status=400) from exc
    if not isinstance(request, dict) or not isinstance(request.get("model"), str):
        raise ProxyError("the body must be a JSON object with a `model` and `messages`", status=400)
    return request


@dataclass
class Upstream:
    """An upstream answer being read."""

    client: httpx.AsyncClient
    response: httpx.Response

    async def aclose(self) -> None:
        await self.response.aclose()
        await self.client.aclose()


async def upstream_open(request: dict) -> Upstream:
    """Send the request on to the upstream; its answer, not read yet."""
    if not settings.LOOPGUARD_UPSTREAM_URL:
        raise ProxyError("the proxy has no upstream: set LOOPGUARD_UPSTREAM_URL", status=503, kind="server_error")
    url = settings.LOOPGUARD_UPSTREAM_URL.rstrip("/") + "/chat/completions"
    headers = {"Accept": "text/event-stream" if request.get("stream") else "application/json"}
    if settings.LOOPGUARD_UPSTREAM_KEY:
        headers["Authorization"] = f"Bearer {settings.LOOPGUARD_UPSTREAM_KEY}"
    client = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT)
    try:
        response = await client.send(client.build_request("POST", url, json=request, headers=headers), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise ProxyError(f"the upstream {url} cannot be reached: {exc}", status=502, kind="server_error") from exc
    return Upstream(client, response)


def proxy_session_create(*, user, project: Project, model: str) -> Session:
    return session_create_live(model=model, title=f"proxy {model}".strip(), uploader=user, project=project)


class Recorder:
    """Writes one proxied answer into its live session, message by message."""

    def __init__(self, session_id: int):
        self.session_id = session_id
        self.seq = 0
        self.events = 0  # events stored: the next event's seq is events + 1
        self.broken = False  # a message was refused: the rest is relayed, not recorded

    def ingest(self, events: list[dict]) -> dict | None:
        """Store `events`; the first stop-level detection they fired, if any."""
        if not events or self.broken:
            return None
        try:
            message = parse_message({"seq": self.seq + 1, "events": events})
            result = live_ingest(session_id=self.session_id, seq=message.seq, events=message.events)
        except ProtocolError as exc:  # text the database cannot store, or the session was closed meanwhile
            logger.warning("proxy session %s: recording stopped: %s", self.session_id, exc)
            self.broken = True
            return None
        self.seq += 1
        self.events += len(events)
        return first_stop(result.detections, STOP_ACTIONS)

    def close(self) -> None:
        if not self.broken:
            live_session_close(session_id=self.session_id)


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each server-sent event (`data:` lines joined; `event:`,
    `id:`, `retry:` and `:` comments carry nothing a chunk lacks)."""
    data: list[str] = []
    async for line in lines:
        if not line.strip():
            if data:
                yield "\n".join(data)
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value.removeprefix(" "))
    if data:
        yield "\n".join(data)


class StreamRelay:
    """The client's side of one streamed answer (see the module docstring)."""

    def __init__(self, session_id: int, upstream: Upstream):
        self.session_id = session_id
        self.upstream = upstream
        self.recorder = Recorder(session_id)
        self._builder = TranscriptBuilder(Source("upstream stream", ""), NAME, VERSION)
        self._reader = ChunkReader(self._builder)
        self._last_chunk: dict = {}

    async def _read(self, queue: asyncio.Queue) -> None:
        try:
            async for data in sse_data(self.upstream.response.aiter_lines()):
                if data.strip() == "[DONE]":
                    break
                try:
                    chunk = json.loads(data)
                except ValueError:
                    chunk = None  # relayed as it is, not recorded
                await queue.put((data, chunk if isinstance(chunk, dict) else None))
        except httpx.HTTPError as exc:
            logger.warning("proxy session %s: the upstream stream broke: %s", self.session_id, exc)
        await queue.put(_END)

    def _take_events(self) -> list[dict]:
        events, self._builder.events = self._builder.events, []
        return events

    def _batch_events(self, items: list[tuple[str, dict | None]], ended: bool) -> tuple[list[dict], list[int]]:
        """The events of a batch, and for each chunk the seq its last event will have."""
        events: list[dict] = []
        last_seqs = []
        for number, (_, chunk) in enumerate(items, 1):
            if chunk is not None:
                self._last_chunk = chunk
                self._reader.feed(chunk, number)
                events += self._take_events()
            last_seqs.append(self.recorder.events + len(events))
        if ended:
            self._reader.close()  # tool calls still being assembled
            events += self._take_events()
        return events, last_seqs

    def _loop_chunk(self, detection: dict) -> bytes:
        last = self._last_chunk
        chunk = {
            "id": last.get("id"),
            "object": "chat.completion.chunk",
            "created": last.get("created"),
            "model": last.get("model"),
            "choices": [
                {"index": 0, "delta": {}, "logprobs": None, "finish_reason": settings.LOOPGUARD_PROXY_FINISH_REASON}
            ],
            "loopguard": {"session": self.session_id, "detection": detection},
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    async def sse(self) -> AsyncIterator[bytes]:
        """The server-sent events for the client."""
        queue: asyncio.Queue = asyncio.Queue(maxsize=QUEUE_CHUNKS)
        reading = asyncio.create_task(self._read(queue))
        try:
            while True:
                batch = [await queue.get()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                ended = batch[-1] is _END
                items = batch[:-1] if ended else batch
                events, last_seqs = self._batch_events(items, ended)
                stop = await sync_to_async(self.recorder.ingest)(events)
                for (data, _), last_seq in zip(items, last_seqs, strict=True):
                    yield f"data: {data}\n\n".encode()
                    if stop is not None and stop["event_seq"] <= last_seq:
                        break
                if stop is not None:
                    yield self._loop_chunk(stop)
                    yield DONE
                    return
                if ended:
                    yield DONE
                    await sync_to_async(self.recorder.close)()
                    return
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            await self.upstream.aclose()


def completion_record(recorder: Recorder, completion: bytes) -> dict | None:
    """Record a whole completion; the stop-level detection it fired, if any."""
    try:
        events = parse_bytes(completion, "completion.json", "openai").events[1:]  # without the session header
    except TranscriptError as exc:
        logger.warning("proxy session %s: the upstream answer is not a completion: %s", recorder.session_id, exc)
        return None
    stop = recorder.ingest(events)
    if stop is None:
        recorder.close()
    return stop


def completion_with_loop(completion: dict, session_id: int, stop: dict) -> dict:
    """The completion as the client gets it after a loop: choice 0's
    finish_reason replaced, the detection under `loopguard`."""
    for choice in completion.get("choices") or []:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            choice["finish_reason"] = settings.LOOPGUARD_PROXY_FINISH_REASON
    return {**completion, "loopguard": {"session": session_id, "detection": stop}}


@dataclass
class ProxyAnswer:
    """What the view sends: a stream of server-sent events, or a body."""

    status: int
    content_type: str
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None
    session_id: int | None = None


async def chat_completion(*, user, project: Project, request: dict) -> ProxyAnswer:
    """Forward `request`, relay the answer and record it as a live session of
    `user` in `project`. An upstream error answer is relayed as it is, and not recorded."""
    upstream = await upstream_open(request)
    response = upstream.response
    if response.status_code != 200:
        try:
            body = await response.aread()
        finally:
            await upstream.aclose()
        return ProxyAnswer(response.status_code, response.headers.get("content-type", "application/json"), body)
    session = await sync_to_async(proxy_session_create)(user=user, project=project, model=request["model"])
    if request.get("stream"):
        relay = StreamRelay(session.pk, upstream)
        return ProxyAnswer(200, "text/event-stream", stream=relay.sse(), session_id=session.pk)
    try:
        body = await response.aread()
    finally:
        await upstream.aclose()
    stop = await sync_to_async(completion_record)(Recorder(session.pk), body)
    if stop is not None:
        body = json.dumps(completion_with_loop(json.loads(body), session.pk, stop)).encode()
    return ProxyAnswer(200, "application/json", body, session_id=session.pk)
