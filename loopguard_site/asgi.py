"""The ASGI application Daphne serves: HTTP (with static files) and WebSockets.

WebSocket clients authenticate with the browser's login session or with an API
token (`Authorization: Bearer` header or `?token=`), see accounts.middleware.
"""

import gc
import os

import autobahn.util
from django.core.asgi import get_asgi_application

from loopguard_site import direct_writes, frame_masks, frame_utf8, text_frames

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
django_http = get_asgi_application()  # sets Django up before consumers import models

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from loopguard_site.accounts.middleware import (  # noqa: E402
    ApiTokenAuthMiddleware,
    BrowserOriginValidator,
    MessageSizeLimit,
)
from loopguard_site.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Daphne serves static/ itself (plotly.min.js included), so the lab
        # needs no other web server; see README for a proxy in front.
        "http": ASGIStaticFilesHandler(django_http),
        "websocket": BrowserOriginValidator(ApiTokenAuthMiddleware(MessageSizeLimit(URLRouter(websocket_urlpatterns)))),
    }
)

# The garbage collector's full passes walk every long-lived object and stall
# every socket of the process meanwhile (at 500 live producers 100-150 ms a
# pass; BENCHMARKS.md, section 4). So: what the application has loaded so
# far lives as long as the process and is kept out of them; under load they
# come at most every FULL_PASS_AFTER passes of the middle generation
# (CPython's default is 10: a pass every 10-20 s at 500 producers; cyclic
# garbage waits longer, bounded); and the ingest thread makes one when it
# is idle (`IngestWorker.collect_if_grown`).
FULL_PASS_AFTER = 100
gc.freeze()
gc.set_threshold(*gc.get_threshold()[:2], FULL_PASS_AFTER)

# autobahn (Daphne's WebSocket framing) builds a debug log line for every
# frame it sends or receives, colored with click, even when debug logs are
# off: 18 µs a frame, three frames a live message (its receipt, the ack,
# the viewer's copy). Uncolored, the line costs 6 µs.
autobahn.util._HAS_CLICK = False
# and a native masker for every frame a client sends (frame_masks), and
# four native calls that give the GIL away for every text message
# (frame_utf8), and a dozen calls to read a small text message
# (text_frames); Twisted two epoll_ctl calls and a turn of the loop for
# every frame the server sends (direct_writes)
frame_masks.install()
frame_utf8.install()
text_frames.install()
direct_writes.install()
