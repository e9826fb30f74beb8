"""The proxies' one relay: `POST /v1/chat/completions`, `/v1/messages`
(Anthropic) and `/v1/responses` (OpenAI) forwarded to their upstream with
the lab's upstream key (never the caller's), and recorded as a live session
of the caller through the live app's one ingest (`live_ingest`, each
message checked by `parse_message` first). What differs per API (upstream,
error body, the reader turning its records into events, how a loop ends its
answer) is a small `ProxyApi` adapter (chat_completions.py, messages.py,
responses.py); everything else is here, once.

Streaming: a task reads the upstream's server-sent events into a bounded
queue (a slow client or ingest slows the upstream read instead of filling
memory). The relay takes whatever has arrived as one ingest message, then
forwards those records, each unchanged (its `event:` name and data): one
ingest round trip per batch however fast the records come, and no record
reaches the client before its events were checked. When the ingest answers
a stop-level detection, the records up to the one whose events fired it
(`event_seq`) are forwarded, then the API's own ending (`StreamEnding`),
carrying the detection under `loopguard`; the upstream is closed, and the
client's text ends at the detection's `at`. The session stays `stopped`; a
stream that ends normally closes its session.

Not streaming: the whole answer is recorded as one message and, when a
stop-level loop is found, marked as the API marks a cut answer (`with_loop`).
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

from detector.importers import Source, TranscriptBuilder, TranscriptError
from detector.json_depth import json_depth_problem
from detector.loop_signal import STOP_ACTIONS, first_stop
from loopguard_site.accounts.models import Project
from loopguard_site.errors import FieldError
from loopguard_site.live.protocol import parse_message
from loopguard_site.live.services import live_ingest, live_session_close
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_live

logger = logging.getLogger(__name__)

QUEUE_RECORDS = 256  # upstream records read ahead of the relay at most
UPSTREAM_TIMEOUT = httpx.Timeout(600.0, connect=10.0)  # a reasoning model may think for minutes between chunks
_END = object()  # the upstream stream ended

SseRecord = tuple[str | None, str]  # an event's name (None: none) and its data


class ProxyError(Exception):
    """A request the proxy cannot serve, answered as the API's error body.
    `kind`: the OpenAI error type; an adapter maps it to its API's."""

    def __init__(
        self, message: str, *, status: int, kind: str = "invalid_request_error", retry_after: int | None = None
    ):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after  # seconds, for a 429


class StreamEnding:
    """How a loop ends one API's stream. `seen` is told every record the
    client got (in order); `records` gives what follows them after a loop:
    `loop` is `{"session", "detection"}`, carried under `loopguard`."""

    def seen(self, record: dict) -> None:
        pass

    def records(self, loop: dict) -> list[SseRecord]:
        raise NotImplementedError


class ProxyApi:
    """One proxied API (see the module docstring): `path` follows the
    upstream's base URL (and `/v1/` on the lab); `source_format` names the
    importer format its answers are read as."""

    path: str
    source_format: str
    key_headers: tuple[str, ...] = ("Authorization",)  # where the client puts its LoopGuard token

    def upstream(self) -> tuple[str | None, dict]:
        """The upstream base URL (None: not set) and its authentication headers."""
        raise NotImplementedError

    def forwarded_headers(self) -> tuple[str, ...]:
        """Client headers passed on upstream (API versions, betas)."""
        return ()

    def error_body(self, message: str, kind: str) -> dict:
        raise NotImplementedError

    def reader(self, builder: TranscriptBuilder):
        """A stream reader: `feed(record, number)` appends events to `builder`, `close()` ends."""
        raise NotImplementedError

    def ending(self) -> StreamEnding:
        raise NotImplementedError

    def whole_events(self, body: bytes) -> list[dict]:
        """The events of a whole answer; TranscriptError if it is not one."""
        raise NotImplementedError

    def with_loop(self, answer: dict, loop: dict) -> dict:
        """A whole answer as the client gets it after a loop."""
        raise NotImplementedError


def request_json(body: bytes) -> dict:
    """The caller's request body, checked as far as the proxy needs it."""
    if problem := json_depth_problem(body, settings.LOOPGUARD_MAX_JSON_DEPTH):
        raise ProxyError(f"{problem} (LOOPGUARD_MAX_JSON_DEPTH)", status=400)
    try:
        request = json.loads(body or b"null")
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProxyError(f"the body is not valid JSON: {exc}", status=400) from exc
    if not isinstance(request, dict) or not isinstance(request.get("model"), str):
        raise ProxyError("the body must be a JSON object with a `model`", status=400)
    return request


@dataclass
class Upstream:
    """An upstream answer being read."""

    client: httpx.AsyncClient
    response: httpx.Response

    async def aclose(self) -> None:
        await self.response.aclose()
        await self.client.aclose()


async def upstream_open(api: ProxyApi, request: dict, client_headers: dict) -> Upstream:
    """Send the request on to the API's upstream; its answer, not read yet."""
    base, headers = api.upstream()
    if not base:
        raise ProxyError(f"the proxy has no upstream for /v1/{api.path}: set its URL", status=503, kind="server_error")
    url = base.rstrip("/") + "/" + api.path
    headers = {
        **{name: client_headers[name] for name in api.forwarded_headers() if name in client_headers},
        **headers,
        "Accept": "text/event-stream" if request.get("stream") else "application/json",
    }
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
            result = live_ingest(
                session_id=self.session_id, seq=message.seq, events=message.events, texts=message.texts
            )
        except FieldError as exc:  # text the database cannot store, or the session was closed meanwhile
            logger.warning("proxy session %s: recording stopped: %s", self.session_id, exc)
            self.broken = True
            return None
        self.seq += 1
        self.events += len(events)
        return first_stop(result.detections, STOP_ACTIONS)

    def close(self) -> None:
        if not self.broken:
            live_session_close(session_id=self.session_id)


async def sse_records(lines: AsyncIterator[str]) -> AsyncIterator[SseRecord]:
    """The server-sent events of `lines`: each one's `event:` name and its
    `data:` lines joined (`id:`, `retry:` and `:` comments carry nothing a
    record lacks)."""
    event, data = None, []
    async for line in lines:
        if not line.strip():
            if data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value.removeprefix(" "))
        elif field == "event":
            event = value.strip()
    if data:
        yield event, "\n".join(data)


def sse_bytes(record: SseRecord) -> bytes:
    event, data = record
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return (f"event: {event}\n{lines}\n" if event else f"{lines}\n").encode()


class StreamRelay:
    """The client's side of one streamed answer (see the module docstring)."""

    def __init__(self, api: ProxyApi, session_id: int, upstream: Upstream):
        self.api = api
        self.session_id = session_id
        self.upstream = upstream
        self.recorder = Recorder(session_id)
        self._builder = TranscriptBuilder(Source("upstream stream", ""), api.source_format, "")
        self._reader = api.reader(self._builder)
        self._ending = api.ending()

    async def _read(self, queue: asyncio.Queue) -> None:
        try:
            async for event, data in sse_records(self.upstream.response.aiter_lines()):
                try:
                    record = json.loads(data)
                except ValueError:
                    record = None  # relayed as it is (`[DONE]`), not recorded
                await queue.put(((event, data), record if isinstance(record, dict) else None))
        except httpx.HTTPError as exc:
            logger.warning("proxy session %s: the upstream stream broke: %s", self.session_id, exc)
        await queue.put(_END)

    def _take_events(self) -> list[dict]:
        events, self._builder.events = self._builder.events, []
        return events

    def _batch_events(self, items: list[tuple[SseRecord, dict | None]], ended: bool) -> tuple[list[dict], list[int]]:
        """The events of a batch, and for each record the seq its last event will have."""
        events: list[dict] = []
        last_seqs = []
        for number, (_, record) in enumerate(items, 1):
            if record is not None:
                try:
                    self._reader.feed(record, number)
                except TranscriptError as exc:  # not a record of this API: relayed, not recorded
                    logger.warning("proxy session %s: %s", self.session_id, exc)
                events += self._take_events()
            last_seqs.append(self.recorder.events + len(events))
        if ended:
            self._reader.close()  # tool calls still being assembled
            events += self._take_events()
        return events, last_seqs

    async def sse(self) -> AsyncIterator[bytes]:
        """The server-sent events for the client."""
        queue: asyncio.Queue = asyncio.Queue(maxsize=QUEUE_RECORDS)
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
                for (sse, record), last_seq in zip(items, last_seqs, strict=True):
                    yield sse_bytes(sse)
                    if record is not None:
                        self._ending.seen(record)
                    if stop is not None and stop["event_seq"] <= last_seq:
                        break
                if stop is not None:
                    for sse in self._ending.records({"session": self.session_id, "detection": stop}):
                        yield sse_bytes(sse)
                    return
                if ended:
                    await sync_to_async(self.recorder.close)()
                    return
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            await self.upstream.aclose()


def whole_record(api: ProxyApi, recorder: Recorder, body: bytes) -> dict | None:
    """Record a whole answer; the stop-level detection it fired, if any."""
    try:
        events = api.whole_events(body)
    except TranscriptError as exc:
        logger.warning("proxy session %s: the upstream answer is not one: %s", recorder.session_id, exc)
        return None
    stop = recorder.ingest(events)
    if stop is None:
        recorder.close()
    return stop


@dataclass
class ProxyAnswer:
    """What the view sends: a stream of server-sent events, or a body."""

    status: int
    content_type: str
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None
    session_id: int | None = None


async def proxy_call(api: ProxyApi, *, user, project: Project, request: dict, client_headers: dict) -> ProxyAnswer:
    """Forward `request`, relay the answer and record it as a live session of
    `user` in `project`. An upstream error answer is relayed as it is, and not recorded."""
    upstream = await upstream_open(api, request, client_headers)
    response = upstream.response
    if response.status_code != 200:
        try:
            body = await response.aread()
        finally:
            await upstream.aclose()
        return ProxyAnswer(response.status_code, response.headers.get("content-type", "application/json"), body)
    session = await sync_to_async(proxy_session_create)(user=user, project=project, model=request["model"])
    if request.get("stream"):
        relay = StreamRelay(api, session.pk, upstream)
        return ProxyAnswer(200, "text/event-stream", stream=relay.sse(), session_id=session.pk)
    try:
        body = await response.aread()
    finally:
        await upstream.aclose()
    stop = await sync_to_async(whole_record)(api, Recorder(session.pk), body)
    if stop is not None:
        body = json.dumps(api.with_loop(json.loads(body), {"session": session.pk, "detection": stop})).encode()
    return ProxyAnswer(200, "application/json", body, session_id=session.pk)
