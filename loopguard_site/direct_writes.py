"""Daphne's sockets send a frame at once when nothing waits before it.

Twisted's TCP transport never sends in `write`: it buffers the bytes and
registers the socket for writing (an `epoll_ctl`), the event loop comes
round, sends them and unregisters it (another `epoll_ctl`). For a server
whose frames are small and whose sockets are almost always writable (a
live ack, a viewer's events) that is two system calls and a turn of the
loop a frame for nothing. `DirectWriteServer.write` sends what it can at
once when the transport holds nothing unsent, and buffers only the rest, as
before; so bytes go out in the order written either way. `install`, called
when the ASGI application is loaded, makes Daphne's listening ports build
their connections with it.
"""

from __future__ import annotations

from twisted.internet import tcp


class DirectWriteServer(tcp.Server):
    """Twisted's server-side TCP connection, sending in `write` when it can."""

    def write(self, data: bytes) -> None:
        # Under startTLS, writes go through the TLS layer (which reaches the
        # socket by `Connection.write`); an empty buffer is
        # `offset == len(dataBuffer)` with no list of pieces waiting.
        if (
            data
            and not self.TLS
            and self.connected
            and not self._writeDisconnected
            and self.offset == len(self.dataBuffer)
            and not self._tempDataBuffer
        ):
            sent = self.writeSomeData(data)
            if not isinstance(sent, int):  # the connection is lost: the buffered write finds out as before
                sent = 0
            if sent == len(data):
                return
            data = data[sent:]
        super().write(data)


def install() -> None:
    """Make Twisted's TCP ports (Daphne's) build `DirectWriteServer`s."""
    tcp.Port.transport = DirectWriteServer
