"""`/ws/ping/`: an echo that goes through the channel layer (a group send), so
a round trip proves the layer works, Redis or in-memory alike."""

from __future__ import annotations

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from loopguard_site.accounts.access import CLOSE_UNAUTHENTICATED, socket_refuse

GROUP = "health.ping"


class PingConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        if not self.scope["user"].is_authenticated:
            await socket_refuse(self, CLOSE_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(GROUP, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(GROUP, self.channel_name)

    async def receive_json(self, content, **kwargs) -> None:
        # every member of the group, this socket included, gets the echo
        ping = content.get("ping") if isinstance(content, dict) else None
        await self.channel_layer.group_send(GROUP, {"type": "ping.echo", "ping": ping})

    async def ping_echo(self, message: dict) -> None:
        await self.send_json({"pong": message["ping"]})
