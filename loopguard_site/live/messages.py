"""Messages of the live channel-layer groups.

Viewers of a session (`/ws/sessions/<id>`) share the group `viewer_group(id)`
and get the messages declared here, as the JSON text the socket sends
(`viewer_text`, `events_text`). The producer sockets of a session share
`producer_group(id)`: they get the
detections that silence fired, and a new producer takes the session over
(the older socket closes). The `send_*` functions here are the only code
that calls the channel layer for live sessions; consumers forward what they get.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from itertools import groupby
from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from loopguard_site.transcripts.event_rows import event_json

from .protocol import ProducerSocket


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


def viewer_text(message: ViewerMessage) -> str:
    """A viewer message as the JSON text the sockets send. Viewers' copies
    cross the channel layer as this text: encoded once, not once per
    viewer, and whatever JSON an event holds (an integer past 64 bits,
    which the layer's msgpack refuses)."""
    return json.dumps(message)


EVENTS_OPEN, EVENTS_END = '{"events": [', "]}"  # an `events_text`'s frame around its events


def events_text(first_seq: int, events: list[dict], event_jsons: list[str]) -> str:
    """`viewer_text({"events": [{**event, "seq": n}, ...]})` for events
    numbered from `first_seq`, from each event's JSON text as stored (built
    as text: the events are not encoded a second time)."""
    parts = []
    for seq, (event, text) in enumerate(zip(events, event_jsons, strict=True), start=first_seq):
        if "seq" in event:  # a field of the producer's own: the server's number takes its place
            parts.append(event_json({**event, "seq": seq}))
        else:
            parts.append(f'{text[:-1]}, "seq": {seq}}}')  # an event is a non-empty object: '{..."type"...}'
    return EVENTS_OPEN + ", ".join(parts) + EVENTS_END


def texts_merged(texts: Sequence[str]) -> list[str]:
    """The viewer texts, in order, with each run of `events_text`s merged
    into one (their events in order): a viewer frame carries every event of
    a session that one batch stored between two detections or states."""
    merged: list[str] = []
    for is_events, run in groupby(texts, key=lambda text: text.startswith(EVENTS_OPEN)):
        if is_events:
            merged.append(
                EVENTS_OPEN + ", ".join(text[len(EVENTS_OPEN) : -len(EVENTS_END)] for text in run) + EVENTS_END
            )
        else:
            merged.extend(run)
    return merged


async def forward_to_viewers(forwards: Sequence[tuple[int, list[str]]]) -> None:
    """Forward each (session id, `viewer_text`s), in order, to every socket
    watching the session: one channel-layer message a session, whatever the
    number of its messages in `forwards`, with its events merged
    (`texts_merged`), all sent at once (`group_send_many`: one Redis round
    trip)."""
    by_session: dict[int, list[str]] = {}
    for session_id, texts in forwards:
        by_session.setdefault(session_id, []).extend(texts)
    sends = [
        (viewer_group(session_id), {"type": "live.forward", "texts": texts_merged(texts)})
        for session_id, texts in by_session.items()
    ]
    await get_channel_layer().group_send_many(sends)


def send_to_viewers(session_id: int, texts: list[str]) -> None:
    """`forward_to_viewers` of one session's texts, from synchronous code."""
    async_to_sync(forward_to_viewers)([(session_id, texts)])


def send_to_producer(session_id: int, detections: list[dict]) -> None:
    """Detections fired while no message arrived (silence), for the
    session's producer socket; a message's own detections go back in the
    answer to it."""
    async_to_sync(get_channel_layer().group_send)(
        producer_group(session_id), {"type": "producer.detections", "detections": detections}
    )


async def send_producer_taken(session_id: int, channel_name: str, socket: ProducerSocket) -> None:
    """Tell the session's producer sockets that `channel_name` (`socket`) took over."""
    await get_channel_layer().group_send(
        producer_group(session_id), {"type": "producer.taken", "channel": channel_name, **asdict(socket)}
    )
