"""A WebSocket round trip through the real Redis channel layer (full mode)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.contrib.auth import get_user_model

from loopguard_site.asgi import application
from tests.members import member, project_token
from tests.sockets import connect_refused


@pytest.mark.django_db(transaction=True)
def test_it_echoes_to_every_socket_of_the_group_through_redis(live_services):
    assert isinstance(get_channel_layer(), RedisPubSubChannelLayer)
    _, token = project_token(user=member(get_user_model().objects.create_user("viewer")), name="test")

    async def scenario() -> tuple:
        by_header = WebsocketCommunicator(
            application, "/ws/ping/", headers=[(b"authorization", f"Bearer {token}".encode())]
        )
        by_query = WebsocketCommunicator(application, f"/ws/ping/?token={token}")
        connected = (await by_header.connect(timeout=10), await by_query.connect(timeout=10))
        await by_header.send_json_to({"ping": "hello"})
        answers = (await by_header.receive_json_from(timeout=10), await by_query.receive_json_from(timeout=10))
        await by_header.disconnect()
        await by_query.disconnect()
        return connected, answers

    connected, answers = async_to_sync(scenario)()

    assert connected == ((True, None), (True, None))
    assert answers == ({"pong": "hello"}, {"pong": "hello"})


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/ws/ping/", []),
        ("/ws/ping/?token=lg_not-a-token", []),
        ("/ws/ping/", [(b"authorization", b"Bearer lg_not-a-token")]),
    ],
)
@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_socket_without_a_valid_token(live_services, path, headers):
    async def scenario() -> tuple:
        return await connect_refused(WebsocketCommunicator(application, path, headers=headers))

    assert async_to_sync(scenario)() == (True, 4401)


@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_cross_site_browser_socket(live_services):
    _, token = project_token(user=member(get_user_model().objects.create_user("viewer")), name="test")
    headers = [(b"authorization", f"Bearer {token}".encode()), (b"origin", b"https://evil.example")]

    async def scenario() -> tuple:
        return await WebsocketCommunicator(application, "/ws/ping/", headers=headers).connect(timeout=10)

    assert async_to_sync(scenario)() == (False, 1000)
