"""The live sockets.

`/ws/ingest/<id>`, the producer's: on connect `{"resume": LAST_ACKED_SEQ}`
(0 for a new session), then the session's stop-level detections again (a
producer that lost the connection before reading one still learns to stop).
Per message: `{"detection": {...}}` for each detection it fired, then
`{"ack": N}`; a bad message gets `{"error", "field", "seq"}` (and
`retry_after`, seconds, when the token's daily quota is used up) and the
socket stays usable; nothing of it is stored. Messages are stored by the
process's ingest thread (`ingest_worker`), with those of its other
sockets. Detections that silence fires (`live_sessions_tick`) arrive as
`{"detection": {...}}` between messages. `{"close": true}` closes the
session, answers `{"state": "closed"}` and ends the socket. One producer socket per session: a new one
takes over and the older is closed with code 4409; between the sockets of one
`LiveSession` (its `producer` and `connection` query parameters) only a later
connection takes over (`ProducerSocket.replaced_by`).

`/ws/sessions/<id>`, the viewers': a snapshot (`{"state"}`, the stored
events in chunks, the detections), then every message of the session's group.
Close codes: 4401 not signed in, 4403 not allowed (accounts.access: a role
too low, another's session to stream into), 4404 no such session (or one of
a project the user does not reach), 4409 a session that takes no events
(ingest) or a producer replaced.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.core.exceptions import PermissionDenied
from django.http import Http404

from loopguard_site.accounts.access import CLOSE_UNAUTHENTICATED, close_code, socket_refuse
from loopguard_site.errors import FieldError
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.selectors import session_for

from .ingest_worker import socket_ingest
from .messages import producer_group, send_producer_taken, viewer_group
from .protocol import ProducerSocket, parse_message, producer_socket, too_deep
from .selectors import acked_seq, event_chunks, live_detections, live_session_get, session_to_ingest
from .services import IngestRequest, live_detection_dict, live_session_close
from .states import Trigger, takes

CLOSE_CONFLICT = 4409


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


async def _permitted_session(consumer: AsyncJsonWebsocketConsumer, session_for_user: Callable) -> Session | None:
    """The URL's session, as `session_for_user(user, id)` (accounts.access)
    lets the socket's user have it; otherwise None, the socket closed with
    the code saying why."""
    user = consumer.scope["user"]
    if not user.is_authenticated:
        await socket_refuse(consumer, CLOSE_UNAUTHENTICATED)
        return None
    session_id = consumer.scope["url_route"]["kwargs"]["session_id"]
    try:
        return await database_sync_to_async(session_for_user)(user, session_id)
    except (Http404, PermissionDenied) as refusal:
        await socket_refuse(consumer, close_code(refusal))
        return None


def error_message(error: FieldError, seq: object) -> dict:
    """A refused message's answer on the producer socket (docs/event-format.md):
    `{"error", "field", "seq"}`, and `retry_after` when only time can help."""
    message = {"error": str(error), "field": error.field, "seq": seq}
    if error.retry_after is not None:
        message["retry_after"] = error.retry_after
    return message


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """channels' dispatch closes the old database connections before every
    handler: a hop to the one shared sync thread for each message, the
    busiest thing a loaded server did with live streams. These consumers reach
    the database only through `database_sync_to_async` (which does the same
    around each call) and the ingest thread, so they dispatch without it."""

    async def dispatch(self, message: dict) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)


class IngestConsumer(LiveConsumer):
    async def connect(self) -> None:
        self.producer = producer_socket(self.scope["query_string"], time.time())
        session = await _permitted_session(self, session_to_ingest)
        if session is None:
            return
        if not takes(session.state, Trigger.EVENTS):
            await socket_refuse(self, CLOSE_CONFLICT)
        else:
            self.session_id = session.pk
            await send_producer_taken(self.session_id, self.channel_name, self.producer)
            await self.channel_layer.group_add(producer_group(self.session_id), self.channel_name)
            await self.accept()
            await self.send_json({"resume": await database_sync_to_async(acked_seq)(self.session_id)})
            for detection in await database_sync_to_async(_stop_detections)(session):
                await self.send_json({"detection": detection})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "session_id"):
            await self.channel_layer.group_discard(producer_group(self.session_id), self.channel_name)

    @classmethod
    async def decode_json(cls, text_data: str) -> object:
        return json.loads(text_data, parse_constant=_reject_constant)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        try:
            text = text_data if text_data is not None else bytes_data.decode("utf-8")
            if (refusal := too_deep(text)) is not None:
                await self.send_json(error_message(*refusal))
                return
            content = await self.decode_json(text)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError included
            await self.send_json(error_message(FieldError(f"the message is not valid JSON: {exc}"), None))
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs) -> None:
        seq = content.get("seq") if isinstance(content, dict) else None
        try:
            message = parse_message(content)
            if message.seq is None:
                result = await database_sync_to_async(live_session_close)(session_id=self.session_id)
            else:
                result = await socket_ingest(
                    IngestRequest(
                        session_id=self.session_id,
                        seq=message.seq,
                        events=message.events,
                        close=message.close,
                        token_key=self.scope.get("api_token_key"),
                    )
                )
        except FieldError as exc:
            await self.send_json(error_message(exc, seq))
            return
        for detection in result.detections:
            await self.send_json({"detection": detection})
        if message.seq is not None:
            await self.send(text_data=f'{{"ack": {result.ack}}}')  # what send_json would send, without its encoder
        if message.close:
            await self.send_json({"state": result.state})
            await self.close(code=1000)

    async def producer_detections(self, message: dict) -> None:
        for detection in message["detections"]:
            await self.send_json({"detection": detection})

    async def producer_taken(self, message: dict) -> None:
        other = ProducerSocket(producer=message["producer"], connection=message["connection"], since=message["since"])
        if message["channel"] != self.channel_name and self.producer.replaced_by(other):
            await self.close(code=CLOSE_CONFLICT)


def _stop_detections(session) -> list[dict]:
    return [live_detection_dict(d) for d in live_detections(session, actions=("stop",))]


def _snapshot(session_id: int) -> list[dict]:
    session = live_session_get(session_id)  # read again: the group was joined meanwhile
    messages: list[dict] = [{"state": session.state}]
    messages += [{"events": chunk} for chunk in event_chunks(session)]
    messages += [{"detection": live_detection_dict(d)} for d in live_detections(session)]
    return messages


class ViewerConsumer(LiveConsumer):
    async def connect(self) -> None:
        session = await _permitted_session(self, session_for)
        if session is None:
            return
        session_id = session.pk
        # Join first, then read the snapshot: nothing can fall between them
        # (what arrives twice, the page drops by `seq` and detection `id`).
        self.group = viewer_group(session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        for message in await database_sync_to_async(_snapshot)(session_id):
            await self.send_json(message)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def live_forward(self, message: dict) -> None:
        for text in message["texts"]:
            await self.send(text_data=text)
