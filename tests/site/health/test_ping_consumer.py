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


@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        (b"http://127.0.0.1:8123", True),  # the page's own host and port
        (b"http://127.0.0.1:9999", False),  # another port of the same host: another site
        (b"http://localhost:8123", False),  # another host name
        (b"http://127.0.0.1", False),  # port 80 is not 8123
    ],
)
@pytest.mark.django_db(transaction=True)
def test_a_browser_socket_origin_must_match_the_host_and_port(live_services, origin, accepted):
    _, token = project_token(user=member(get_user_model().objects.create_user("viewer")), name="test")
    headers = [(b"authorization", f"Bearer {token}".encode()), (b"host", b"127.0.0.1:8123"), (b"origin", origin)]

    async def scenario() -> tuple:
        socket = WebsocketCommunicator(application, "/ws/ping/", headers=headers)
        outcome = await socket.connect(timeout=10)
        await socket.disconnect()
        return outcome

    assert async_to_sync(scenario)() == ((True, None) if accepted else (False, 1000))
