"""The live sockets.

`/ws/ingest/<id>`, the producer's: on connect `{"resume": LAST_ACKED_SEQ}`
(0 for a new session; `"protocol": 3` beside it on a protocol 3 socket),
then the session's stop-level detections again (a producer that lost the
connection before reading one still learns to stop).
Per message: `{"detection": {...}}` for each detection it fired, then
`{"ack": N}` (protocol 2, `?protocol=2`: one ack for the socket's messages
stored together; protocol 3, `?protocol=3`: that ack held up to
`answers.ACK_HOLD_SECONDS` unless a message asks for it; `answers`); the
socket reads its next message without waiting for the last to be stored,
and answers in the order they came. A
bad message gets `{"error", "field", "seq"}` (and `retry_after`, seconds,
when the token's daily quota is used up) and the socket stays usable;
nothing of it is stored. Messages are stored by the
process's ingest thread (`ingest_worker`), with those of its other
sockets. Detections that silence fires (`live_sessions_tick`) arrive as
`{"detection": {...}}` between messages. `{"close": true}` closes the
session once the messages before it are answered, answers `{"state":
"closed"}` and ends the socket. One producer socket per session: a new one
takes over and the older is closed with code 4409; between the sockets of one
`LiveSession` (its `producer` and `connection` query parameters) only a later
connection takes over (`ProducerSocket.replaced_by`).

`/ws/sessions/<id>`, the viewers': a snapshot (`{"state"}`, the stored
events in chunks, the detections), then every message of the session's group.
Close codes: 4401 not signed in, 4403 not allowed (accounts.access: a role
too low, another's session to stream into), 4404 no such session (or one of
a project the user does not reach), 4409 a session that takes no events
(ingest) or a producer replaced, 4500 the server failed a message (ingest:
reconnect, resume and send it again).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Sequence

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.core.exceptions import PermissionDenied
from django.http import Http404

from loopguard_site.accounts.access import CLOSE_UNAUTHENTICATED, close_code, socket_refuse
from loopguard_site.errors import FieldError
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_for

from .answers import ACK_HOLD_SECONDS, ack_text, error_message, producer_answer
from .ingest_worker import Outcome, ingest_worker
from .messages import producer_group, send_producer_taken, viewer_group
from .protocol import ProducerSocket, acks_protocol, parse_message, producer_socket, too_deep
from .selectors import acked_seq, event_chunks, live_detections, session_to_ingest
from .services import IngestRequest, live_detection_dict, live_session_close
from .states import Trigger, takes

CLOSE_CONFLICT = 4409


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


# `json.loads(text, parse_constant=...)` builds a decoder per call: a third of its time.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


async def _signed_in(consumer: AsyncJsonWebsocketConsumer) -> bool:
    """Whether the socket has a user; if not, it is closed with 4401."""
    if consumer.scope["user"].is_authenticated:
        return True
    await socket_refuse(consumer, CLOSE_UNAUTHENTICATED)
    return False


async def _permitted_read(consumer: AsyncJsonWebsocketConsumer, read: Callable[[object, int], object]) -> object | None:
    """`read(user, session id)` of the URL's session in one hop to the
    database thread (each hop costs a connect its own database connection),
    as accounts.access lets the socket's user have it; otherwise None, the
    socket closed with the code saying why."""
    session_id = consumer.scope["url_route"]["kwargs"]["session_id"]
    try:
        return await database_sync_to_async(read)(consumer.scope["user"], session_id)
    except (Http404, PermissionDenied) as refusal:
        await socket_refuse(consumer, close_code(refusal))
        return None


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """Dispatches as channels' consumers do (each message of the socket and
    of the channel layer, one at a time, in the order they come), cheaper:

    - channels' `await_many_dispatch` makes a task and an `asyncio.wait` for
      every message (22-24 µs of the event loop a message, timed in
      process; BENCHMARKS.md, section 4). Here the messages go into one
      queue: the socket's from a reader task, the channel layer's handed to
      it by the layer's own reader where the layer can
      (`new_channel_delivered`: no task of ours woken for them), else from a
      second reader task.
    - channels' dispatch closes the old database connections before every
      handler: a hop to the one shared sync thread for each message, the
      busiest thing a loaded server did with live streams. These consumers
      reach the database only through `database_sync_to_async` (which does
      the same around each call) and the ingest thread, so they dispatch
      without it."""

    async def __call__(self, scope, receive, send) -> None:
        # channels' AsyncConsumer.__call__ with its dispatch loop replaced;
        # the live sockets always have a channel layer
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        inbox: asyncio.Queue = asyncio.Queue()
        sources = [receive]
        delivered = hasattr(self.channel_layer, "new_channel_delivered")  # the full mode's layer; not the in-memory one
        if delivered:
            self.channel_name = await self.channel_layer.new_channel_delivered(
                lambda data: inbox.put_nowait((data, None))
            )
        else:
            self.channel_name = await self.channel_layer.new_channel()
            sources.append(functools.partial(self.channel_layer.receive, self.channel_name))
        try:
            await _dispatch_in_turn(inbox, sources, self.dispatch)
        except StopConsumer:
            pass
        finally:
            if delivered:
                await self.channel_layer.channel_discard(self.channel_name)

    async def dispatch(self, message: dict | bytes) -> None:
        if type(message) is bytes:
            # a delivered channel's, decoded only now: bytes waiting in the
            # inbox are nothing the garbage collector walks, dicts are (the
            # reader puts a whole burst of viewers' copies there at once).
            # Decoded on delivery, a copy cost as much as with a reader task
            # (33-34 µs in process, the collector on); decoded here, 29.
            message = self.channel_layer.deserialize(message)
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)


async def _dispatch_in_turn(inbox: asyncio.Queue, sources: list[Callable], dispatch: Callable) -> None:
    """Await each source's messages for ever, put them in `inbox` (as
    (message, None); others may put theirs there too), and dispatch what
    comes out of it one at a time, in the order it arrived; a source that
    fails fails the consumer."""

    async def read(source: Callable) -> None:
        try:
            while True:
                inbox.put_nowait((await source(), None))
        except Exception as exc:  # noqa: BLE001 - handed to the dispatching task, which raises it
            inbox.put_nowait((None, exc))

    readers = [asyncio.create_task(read(source)) for source in sources]
    try:
        while True:
            message, failure = await inbox.get()
            if failure is not None:
                raise failure
            await dispatch(message)
    finally:
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)


class IngestConsumer(LiveConsumer):
    in_flight = 0  # messages submitted and not yet answered
    drained: asyncio.Future | None = None  # resolved once in_flight is back to 0, for whoever waits
    ended = False  # an answer closed the socket (the session closed, or a message failed): read no more
    held_ack = 0  # an ack held for the answer to the messages in flight, or (protocol 3) a while
    ack_timer: asyncio.TimerHandle | None = None  # protocol 3: sends the held ack once it waited long enough
    ack_sending: asyncio.Task | None = None  # the timer's send

    async def connect(self) -> None:
        self.producer = producer_socket(self.scope["query_string"], time.time())
        protocol = acks_protocol(self.scope["query_string"])
        self.acks_upto, self.hold_acks = protocol >= 2, protocol == 3
        if not await _signed_in(self):
            return
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        # Join first, then read where to resume and the stops: a stop that
        # silence fires meanwhile reaches the socket either way.
        await self.channel_layer.group_add(producer_group(self.session_id), self.channel_name)
        opening = await _permitted_read(self, _ingest_opening)
        if opening is None:
            return
        session, resume, stops = opening
        if not takes(session.state, Trigger.EVENTS):
            await socket_refuse(self, CLOSE_CONFLICT)
            return
        await send_producer_taken(self.session_id, self.channel_name, self.producer)
        await self.accept()
        # protocol 3 says so: its client may then ask for a held ack with a bare `{"ack_now": true}`
        await self.send_json({"resume": resume, "protocol": 3} if self.hold_acks else {"resume": resume})
        for detection in stops:
            await self.send_json({"detection": detection})

    async def disconnect(self, code: int) -> None:
        if self.ack_timer is not None:
            self.ack_timer.cancel()
        if hasattr(self, "session_id"):
            await self.channel_layer.group_discard(producer_group(self.session_id), self.channel_name)

    @classmethod
    async def decode_json(cls, text_data: str) -> object:
        if text_data.startswith("\ufeff"):  # json.loads says so; the decoder alone would not
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text_data, 0)
        return _DECODER.decode(text_data)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        try:
            text = text_data if text_data is not None else bytes_data.decode("utf-8")
            if (refusal := too_deep(text)) is not None:
                await self.refuse(*refusal)
                return
            content = await self.decode_json(text)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError included
            await self.refuse(FieldError(f"the message is not valid JSON: {exc}"), None)
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs) -> None:
        if self.ended:
            return
        try:
            message = parse_message(content)
        except FieldError as exc:
            await self.refuse(exc, content.get("seq") if isinstance(content, dict) else None)
            return
        if message.seq is None:  # a bare close or ack_now, after the messages before it
            await self.answers_drained()
            if self.ended:  # one of them failed: the producer resends it on a new socket, then closes
                return
            await self.send_held_ack()
            if not message.close:
                return
            try:
                result = await database_sync_to_async(live_session_close)(session_id=self.session_id)
            except FieldError as exc:
                await self.send_json(error_message(exc, None))
                return
            await self.send_json({"state": result.state})
            await self.close(code=1000)
            return
        self.in_flight += 1
        request = IngestRequest(
            session_id=self.session_id,
            seq=message.seq,
            events=message.events,
            close=message.close,
            token_key=self.scope.get("api_token_key"),
            texts=message.texts,
            ack_now=message.ack_now,
        )
        ingest_worker.submit(request, self)

    async def refuse(self, error: FieldError, seq: object) -> None:
        """Answer a message refused before it is stored, after the messages before it."""
        await self.answers_drained()
        await self.send_held_ack()
        await self.send_json(error_message(error, seq))

    async def answers_drained(self) -> None:
        if self.in_flight:
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained

    async def answered(self, outcomes: Sequence[tuple[IngestRequest, Outcome]]) -> None:
        """The ingest thread's outcomes of this socket's messages stored together."""
        self.in_flight -= len(outcomes)
        answer = producer_answer(
            outcomes,
            acks_upto=self.acks_upto,
            held=self.held_ack,
            more_coming=self.in_flight > 0,
            hold=self.hold_acks,
        )
        self.held_ack = answer.held
        if self.held_ack and self.hold_acks and self.ack_timer is None:
            self.ack_timer = asyncio.get_running_loop().call_later(ACK_HOLD_SECONDS, self.held_ack_due)
        elif not self.held_ack and self.ack_timer is not None:
            self.ack_timer.cancel()
            self.ack_timer = None
        self.ended |= answer.close_code is not None
        if not self.in_flight and self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        for text in answer.texts:
            await self.send(text_data=text)
        if answer.close_code is not None:
            await self.close(code=answer.close_code)

    def held_ack_due(self) -> None:
        self.ack_timer = None
        self.ack_sending = asyncio.get_running_loop().create_task(self.send_held_ack())  # kept: a task is weakly held

    async def send_held_ack(self) -> None:
        """The held ack, if there still is one (an answer sent meanwhile may have carried it)."""
        if self.held_ack:
            text, self.held_ack = ack_text(self.held_ack), 0
            await self.send(text_data=text)

    async def producer_detections(self, message: dict) -> None:
        for detection in message["detections"]:
            await self.send_json({"detection": detection})

    async def producer_taken(self, message: dict) -> None:
        other = ProducerSocket(producer=message["producer"], connection=message["connection"], since=message["since"])
        if message["channel"] != self.channel_name and self.producer.replaced_by(other):
            await self.close(code=CLOSE_CONFLICT)


def _ingest_opening(user, session_id: int) -> tuple[Session, int, list[dict]]:
    """The session the user may stream into, the last seq it acknowledged
    and its stop-level detections (a producer that lost the connection
    before reading one still learns to stop)."""
    session = session_to_ingest(user, session_id)
    stops = [live_detection_dict(d) for d in live_detections(session, actions=("stop",))]
    return session, acked_seq(session_id), stops


def _snapshot(user, session_id: int) -> list[dict]:
    """What a viewer gets first: the session's state, its stored events in
    chunks and its detections."""
    session = session_for(user, session_id)
    messages: list[dict] = [{"state": session.state}]
    messages += [{"events": chunk} for chunk in event_chunks(session)]
    messages += [{"detection": live_detection_dict(d)} for d in live_detections(session)]
    return messages


class ViewerConsumer(LiveConsumer):
    async def connect(self) -> None:
        if not await _signed_in(self):
            return
        # Join first, then read the snapshot: nothing can fall between them
        # (what arrives twice, the page drops by `seq` and detection `id`).
        self.group = viewer_group(self.scope["url_route"]["kwargs"]["session_id"])
        await self.channel_layer.group_add(self.group, self.channel_name)
        snapshot = await _permitted_read(self, _snapshot)
        if snapshot is None:
            return
        await self.accept()
        for message in snapshot:
            await self.send_json(message)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def live_forward(self, message: dict) -> None:
        for text in message["texts"]:
            await self.send(text_data=text)
