"""The load generator's WebSocket client: text frames in and out, and little
else, so that the clients' CPU goes to the server.

`websockets` (what the bench used before) costs the clients about as much
CPU a message as a third of the server's (BENCHMARKS.md, section 4): its
frames pass through a parser coroutine, an assembler and a queue, and each
`recv` waits on a future. Here `data_received` splits the frames and hands
each text to the socket's `on_text` at once, and `send` writes a frame
with an all-zero masking key, which RFC 6455 allows a client (a key must be
sent, and the server unmasks with it as with any other) and which saves
the client the XOR. Real producers run elsewhere and mask as they like;
the server's work per frame is the same. What it does not do: extensions,
binary messages, flow control on sending (the bench's rates are small).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from collections.abc import Callable
from urllib.parse import urlsplit

_ACCEPT_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _CONTINUATION, _CLOSE, _PING, _PONG = 0x1, 0x0, 0x8, 0x9, 0xA
_NO_STATUS = 1005  # a close frame without a code
DROPPED = None  # `close_code` of a connection lost without a close frame


class WebSocketClient(asyncio.Protocol):
    """One client socket. Each text received goes to `on_text(text)` once
    that is set, to `recv` until then; the server's close (or a connection
    lost without one: DROPPED) to `on_close(code)`."""

    def __init__(self, request: bytes, key: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.request, self.expected_accept = request, base64.b64encode(hashlib.sha1(key + _ACCEPT_GUID).digest())
        self.opened: asyncio.Future = loop.create_future()
        self.ended: asyncio.Future = loop.create_future()  # resolved with the close code (DROPPED: none)
        self.on_text: Callable[[str], None] | None = None
        self.on_close: Callable[[int | None], None] | None = None
        self._early: list[str] = []  # texts before `on_text` was set
        self._waiter: asyncio.Future | None = None
        self._buffer = bytearray()
        self._fragments: list[bytes] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self.opened.done():
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head, self._buffer = bytes(self._buffer[:end]), self._buffer[end + 4 :]
            status = head.split(b"\r\n", 1)[0]
            if not status.startswith(b"HTTP/1.1 101") or self.expected_accept not in head:
                self.opened.set_exception(ConnectionError(f"handshake refused: {status.decode(errors='replace')}"))
                self.transport.close()
                return
            self.opened.set_result(self)
        self._read_frames()

    def _read_frames(self) -> None:
        buffer, start, size = self._buffer, 0, len(self._buffer)
        while size - start >= 2:
            first, length = buffer[start], buffer[start + 1] & 0x7F
            head = 2
            if length == 126:
                head, length = 4, int.from_bytes(buffer[start + 2 : start + 4], "big")
            elif length == 127:
                head, length = 10, int.from_bytes(buffer[start + 2 : start + 10], "big")
            if size - start < head + length:
                break  # the rest of the frame is yet to come
            payload = bytes(buffer[start + head : start + head + length])
            start += head + length
            self._frame(first & 0x0F, bool(first & 0x80), payload)
        del buffer[:start]

    def _frame(self, opcode: int, final: bool, payload: bytes) -> None:
        if opcode in (_TEXT, _CONTINUATION):
            self._fragments.append(payload)
            if final:
                text, self._fragments = b"".join(self._fragments).decode(), []
                if self.on_text is not None:
                    self.on_text(text)
                else:
                    self._early.append(text)
                    if self._waiter is not None and not self._waiter.done():
                        self._waiter.set_result(None)
        elif opcode == _PING:
            self._send_frame(_PONG, payload)
        elif opcode == _CLOSE:
            code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else _NO_STATUS
            self._send_frame(_CLOSE, payload[:2])  # the closing handshake's answer
            self._end(code)
            self.transport.close()

    def connection_lost(self, exc) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"connection lost before the handshake: {exc}"))
        self._end(DROPPED)

    def _end(self, code: int | None) -> None:
        if self.ended.done():
            return
        self.ended.set_result(code)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        if self.on_close is not None:
            self.on_close(code)

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        if self.transport.is_closing():
            return
        length = len(payload)
        if length < 126:
            head = bytes((0x80 | opcode, 0x80 | length))
        elif length < 1 << 16:
            head = bytes((0x80 | opcode, 0x80 | 126)) + length.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + length.to_bytes(8, "big")
        self.transport.write(head + b"\0\0\0\0" + payload)  # an all-zero key: the payload as it is

    def send(self, text: str) -> None:
        if self.ended.done():
            raise ConnectionError(f"the socket closed ({self.ended.result()})")
        self._send_frame(_TEXT, text.encode())

    async def recv(self) -> str:
        """The next text received before `on_text` was set; ConnectionError once closed."""
        while not self._early:
            if self.ended.done():
                raise ConnectionError(f"the socket closed ({self.ended.result()})")
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._early.pop(0)

    async def close(self, timeout: float = 5.0) -> None:
        """Close with 1000 and wait (bounded) for the server's answer."""
        if not self.ended.done():
            self._send_frame(_CLOSE, (1000).to_bytes(2, "big"))
            try:
                await asyncio.wait_for(asyncio.shield(self.ended), timeout)
            except TimeoutError:
                pass
        self.transport.close()


async def connect(url: str, headers: dict[str, str], timeout: float = 120) -> WebSocketClient:
    """A client socket to `ws://host:port/path?query`, once the server accepted it."""
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16))
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key.decode()}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: WebSocketClient(request, key), parts.hostname, parts.port)
    return await asyncio.wait_for(client.opened, timeout)
