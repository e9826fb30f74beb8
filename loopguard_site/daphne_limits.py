"""What the lab changes in Daphne's protocols (`install`, called by
`loopguard lab` before the server runs), for limits Daphne has no option for.

- Request bodies are judged on their headers, before any of the body is
  read: Daphne (through Twisted) would read a whole body, then queue all of
  it, in memory, for the application, before Django could refuse it; an
  anonymous 200 MB POST grew a process by 2.5 GB and stalled its other
  requests. A body without credentials (no `Authorization` header, no
  session cookie) may have LOOPGUARD_ANONYMOUS_BODY_KB (a login form needs
  a few hundred bytes); one with credentials, LOOPGUARD_REQUEST_MAX_BYTES.
  Past it the answer is 413, the API's error body, and the connection is
  closed. Declared lengths are refused at once; a chunked body as soon as it
  passes. Whether the credentials are valid Django decides afterwards, on a
  body of bounded size.
- A socket may close with 1009 ("message too big"): autobahn lets an
  application close only with 1000 or 3000-4999, so Daphne answered
  MessageSizeLimit's 1009 with 1011, as if the server had failed.
"""

from __future__ import annotations

import json

from django.conf import settings


def body_limit(headers) -> tuple[int, str]:
    """The most bytes a request with these headers (Twisted's `Headers`) may
    send, and what the refusal says it lacks."""
    cookies = b"".join(headers.getRawHeaders(b"cookie") or [])
    credentials = headers.hasHeader(b"authorization") or settings.SESSION_COOKIE_NAME.encode() + b"=" in cookies
    if credentials:
        return settings.LOOPGUARD_REQUEST_MAX_BYTES, "(LOOPGUARD_UPLOAD_MAX_MB)"
    return settings.LOOPGUARD_ANONYMOUS_BODY_BYTES, "without credentials: sign in or send a token"


def _refusal(size: int, limit: int, why: str) -> bytes:
    body = json.dumps(
        {
            "error": f"a request body of {size} bytes is over the limit of {limit} bytes {why}",
            "field": None,
            "line": None,
        }
    ).encode()
    head = (
        "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def install() -> None:
    from daphne import http_protocol
    from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol

    class BoundedRequest(http_protocol.WebRequest):
        refused = False
        received = 0

        def gotLength(self, length):  # noqa: N802 - Twisted's name
            self.limit, self.why = body_limit(self.requestHeaders)
            if length is not None and length > self.limit:
                self.refuse(length)
            super().gotLength(0 if self.refused else length)

        def handleContentChunk(self, data):  # noqa: N802 - Twisted's name
            if self.refused:
                return
            self.received += len(data)
            if self.received > self.limit:
                self.refuse(self.received)
                return
            super().handleContentChunk(data)

        def refuse(self, size: int) -> None:
            self.refused = True
            self.channel.transport.write(_refusal(size, self.limit, self.why))
            self.channel.transport.loseConnection()

    class SocketProtocol(WebSocketProtocol):
        def serverClose(self, code=None):  # noqa: N802 - Daphne's name
            if code == 1009:
                self.sendCloseFrame(code=code, isReply=False)
            else:
                super().serverClose(code)

    http_protocol.WebRequest = BoundedRequest  # what HTTPFactory.buildProtocol builds
    WebSocketFactory.protocol = SocketProtocol
