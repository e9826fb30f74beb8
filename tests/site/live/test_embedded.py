"""The embedded mode (SQLite, in-memory channel layer): the same ingest and
the same loop signal to the producer and a viewer."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

from loopguard_site.live.services import live_detection_dict
from loopguard_site.replay.models import Detection

from .conftest import TIMEOUT, connected, ingest_socket, receive, viewer_socket

pytestmark = [pytest.mark.embedded, pytest.mark.django_db(transaction=True)]


def test_the_stop_reaches_producer_and_viewer(live_session, producer, loop_events, loop_stop):
    assert isinstance(get_channel_layer(), InMemoryChannelLayer)

    async def scenario() -> tuple:
        viewer = viewer_socket(live_session, producer)
        await connected(viewer)
        socket = ingest_socket(live_session, producer)
        await socket.connect(timeout=TIMEOUT)
        answers = [await socket.receive_json_from(timeout=TIMEOUT)]
        await socket.send_json_to({"seq": 1, "events": loop_events[: loop_stop.seq]})
        answers += await receive(socket, 2)
        await socket.disconnect()
        seen = await receive(viewer, 3)
        await viewer.disconnect()
        return answers, seen

    answers, seen = async_to_sync(scenario)()

    detection = live_detection_dict(Detection.objects.get(session=live_session))
    assert answers == [{"resume": 0}, {"detection": detection}, {"ack": 1}]
    assert [list(message) for message in seen] == [["events"], ["detection"], ["state"]]
    assert (seen[1], seen[2]) == ({"detection": detection}, {"state": "stopped"})
