"""Every WebSocket URL of the lab. An app with consumers adds its
`websocket_urlpatterns` list here (one import, one entry)."""

from loopguard_site.health.routing import websocket_urlpatterns as health_websockets
from loopguard_site.live.routing import websocket_urlpatterns as live_websockets
from loopguard_site.profiles.routing import websocket_urlpatterns as tuning_websockets
from loopguard_site.replay.routing import websocket_urlpatterns as replay_websockets

websocket_urlpatterns = [
    *health_websockets,
    *replay_websockets,
    *live_websockets,
    *tuning_websockets,
]
