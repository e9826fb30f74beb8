"""Sockets the server refuses at connect: it accepts, then closes with the
code saying why (4401, 4403, 4404, 4409), so that a real client sees the code
rather than an HTTP 403 handshake failure."""

from __future__ import annotations

from channels.testing import WebsocketCommunicator

TIMEOUT = 10


async def connect_refused(socket: WebsocketCommunicator) -> tuple[bool, int | None]:
    """(accepted, close code) of a socket the server refuses: (True, code)
    when it accepted then closed, (False, code) when it failed the handshake;
    then the disconnect that lets the consumer finish."""
    accepted, code = await socket.connect(timeout=TIMEOUT)
    if accepted:
        closing = await socket.receive_output(timeout=TIMEOUT)
        code = closing.get("code") if closing["type"] == "websocket.close" else None
    await socket.disconnect()
    return accepted, code
