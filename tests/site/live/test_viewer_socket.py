"""`/ws/sessions/<id>`: many viewers per session, each gets the snapshot and
then, through the real Redis layer, the events, the detection and the state
the moment the producer's message is stored."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.pubsub import RedisPubSubChannelLayer

from loopguard_site.asgi import application
from loopguard_site.live.services import live_detection_dict, live_ingest
from loopguard_site.replay.models import Detection

from .conftest import TIMEOUT, connect_refused, connected, ingest_socket, receive, viewer_socket

pytestmark = pytest.mark.django_db(transaction=True)


def numbered(events: list[dict], first: int = 1) -> list[dict]:
    return [{"seq": seq, **event} for seq, event in enumerate(events, first)]


def test_every_viewer_sees_events_detection_and_state_as_they_happen(
    live_services, live_session, producer, outsider, loop_events, loop_stop
):
    assert isinstance(get_channel_layer(), RedisPubSubChannelLayer)
    stop = loop_stop.seq
    batches = [loop_events[: stop - 20], loop_events[stop - 20 : stop], loop_events[stop : stop + 2]]

    async def scenario() -> tuple:
        viewers = [viewer_socket(live_session, producer), viewer_socket(live_session, outsider)]
        for viewer in viewers:
            assert await viewer.connect(timeout=TIMEOUT) == (True, None)
        snapshots = [await receive(viewer, 1) for viewer in viewers]
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        for seq, batch in enumerate(batches, 1):
            await socket.send_json_to({"seq": seq, "events": batch})
            while "ack" not in await socket.receive_json_from(timeout=TIMEOUT):
                pass
        await socket.disconnect()
        seen = [await receive(viewer, 5) for viewer in viewers]
        for viewer in viewers:
            await viewer.disconnect()
        return snapshots, seen

    snapshots, seen = async_to_sync(scenario)()

    detection = live_detection_dict(Detection.objects.get(session=live_session))
    assert snapshots == [[{"state": "live"}], [{"state": "live"}]]
    expected = [
        {"events": numbered(batches[0])},
        {"events": numbered(batches[1], stop - 19)},
        {"detection": detection},
        {"state": "stopped"},
        {"events": numbered(batches[2], stop + 1)},
    ]
    assert seen == [expected, expected]
    assert detection == {"id": detection["id"], "profile": "default", **loop_stop.detection, "event_seq": stop}


def test_a_viewer_joining_late_gets_the_stored_session_first(
    live_services, live_session, producer, loop_events, loop_stop
):
    events = loop_events[: loop_stop.seq + 10]
    live_ingest(session_id=live_session.pk, seq=1, events=events)

    async def scenario() -> list[dict]:
        viewer = viewer_socket(live_session, producer)
        await viewer.connect(timeout=TIMEOUT)
        messages = await receive(viewer, 3)
        await viewer.disconnect()
        return messages

    detection = live_detection_dict(Detection.objects.get(session=live_session))
    assert async_to_sync(scenario)() == [
        {"state": "stopped"},
        {"events": numbered(events)},
        {"detection": detection},
    ]


@pytest.mark.parametrize(("path", "code"), [("/ws/sessions/{pk}", 4401), ("/ws/sessions/{missing}", 4404)])
def test_it_refuses_anonymous_viewers_and_missing_sessions(live_services, live_session, producer, path, code):
    headers = [] if code == 4401 else producer.headers
    url = path.format(pk=live_session.pk, missing=live_session.pk + 1000)

    async def scenario() -> tuple:
        return await connect_refused(WebsocketCommunicator(application, url, headers=headers))

    assert async_to_sync(scenario)() == (True, code)


def test_an_event_carrying_its_own_seq_is_numbered_by_the_server(live_services, live_session, producer):
    claims = {"type": "content", "text": "I say I am 99. ", "seq": 99}

    async def scenario() -> list[dict]:
        viewer = viewer_socket(live_session, producer)
        await connected(viewer)
        await database_sync_to_async(live_ingest)(session_id=live_session.pk, seq=1, events=[claims])
        live = await receive(viewer, 1)
        await viewer.disconnect()
        late = viewer_socket(live_session, producer)
        await connected(late)
        snapshot = await receive(late, 1)
        await late.disconnect()
        return live + snapshot

    expected = {"events": [{**claims, "seq": 1}]}
    assert async_to_sync(scenario)() == [expected, expected]


def test_an_integer_past_64_bits_reaches_the_viewer_through_the_producer_socket(live_services, live_session, producer):
    """JSON allows any integer; the channel layer's msgpack does not, so the
    viewers' copy crosses Redis as the JSON text the sockets send."""
    big = {"type": "content", "text": "x", "tokens": 2**70}

    async def scenario() -> tuple[list[dict], list[dict]]:
        viewer = viewer_socket(live_session, producer)
        await connected(viewer)
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        await socket.send_json_to({"seq": 1, "event": big})
        answers = await receive(socket, 1)
        seen = await receive(viewer, 1)
        await socket.disconnect()
        await viewer.disconnect()
        return answers, seen

    assert async_to_sync(scenario)() == ([{"ack": 1}], [{"events": [{**big, "seq": 1}]}])
