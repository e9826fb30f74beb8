"""Messages of the live channel-layer groups.

Viewers of a session (`/ws/sessions/<id>`) share the group `viewer_group(id)`
and get the payloads declared here, exactly as the socket sends them. The
producer sockets of a session share `producer_group(id)`: they get the
detections that silence fired, and a new producer takes the session over
(the older socket closes). The `send_*` functions here are the only code
that calls the channel layer for live sessions; consumers forward what they get.
"""

from __future__ import annotations

import json
from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


class EventsMessage(TypedDict):
    events: list[dict]  # each event with its `seq` (the session's event number)


class DetectionMessage(TypedDict):
    detection: dict  # detection_to_dict() plus `event_seq`


class StateMessage(TypedDict):
    state: str


ViewerMessage = EventsMessage | DetectionMessage | StateMessage


def viewer_group(session_id: int) -> str:
    return f"live.session.{session_id}"


def producer_group(session_id: int) -> str:
    return f"live.producer.{session_id}"


async def forward_to_viewers(session_id: int, payloads: list[ViewerMessage]) -> None:
    """Forward payloads, in order, to every socket watching the session (one
    channel-layer message for them all). They travel as the JSON text the
    sockets send: encoded once, not once per viewer, and whatever JSON an
    event holds (an integer past 64 bits, which the layer's msgpack refuses)."""
    texts = [json.dumps(payload) for payload in payloads]
    await get_channel_layer().group_send(viewer_group(session_id), {"type": "live.forward", "texts": texts})


def send_to_viewers(session_id: int, payloads: list[ViewerMessage]) -> None:
    """`forward_to_viewers` from synchronous code."""
    async_to_sync(forward_to_viewers)(session_id, payloads)


def send_to_producer(session_id: int, detections: list[dict]) -> None:
    """Detections fired while no message arrived (silence), for the
    session's producer socket; a message's own detections go back in the
    answer to it."""
    async_to_sync(get_channel_layer().group_send)(
        producer_group(session_id), {"type": "producer.detections", "detections": detections}
    )


async def send_producer_taken(session_id: int, channel_name: str) -> None:
    """Tell the session's producer sockets that `channel_name` took over."""
    await get_channel_layer().group_send(
        producer_group(session_id), {"type": "producer.taken", "channel": channel_name}
    )
