"""A server connection sends in `write` when nothing waits before it, buffers
the rest as Twisted does, and the peer gets every byte in the order
written; the server builds its connections so."""

from __future__ import annotations

import os
import socket

from twisted.internet.protocol import Protocol
from twisted.internet.testing import MemoryReactor

from loopguard_site.direct_writes import DirectWriteServer
from tests.loaded_server import printed_by_loaded_server


def connection() -> tuple[DirectWriteServer, socket.socket, MemoryReactor]:
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    reactor = MemoryReactor()
    return DirectWriteServer(ours, Protocol(), ("127.0.0.1", 1), None, 0, reactor), peer, reactor


def read_all(peer: socket.socket, length: int) -> bytes:
    received = b""
    while len(received) < length:
        received += peer.recv(1 << 20)
    return received


def test_a_frame_goes_out_in_write_without_the_loop():
    server, peer, reactor = connection()
    server.write(b"first")
    server.write(b"second")
    assert read_all(peer, 11) == b"firstsecond"
    assert server not in reactor.writers  # never registered for writing


def test_what_the_socket_does_not_take_is_buffered_and_later_writes_queue_behind_it():
    server, peer, reactor = connection()
    big = os.urandom(8 << 20)  # more than the socket's buffer takes at once
    server.write(big)
    assert server in reactor.writers
    assert 0 < server._tempDataLen < len(big)  # part sent at once, the rest buffered
    server.write(b"after")  # waits behind the rest of big, not sent ahead of it
    expected = big + b"after"
    received = b""
    while len(received) < len(expected):
        server.doWrite()  # what the loop does once the socket is writable
        received += peer.recv(1 << 20)
    assert received == expected
    assert server not in reactor.writers  # all sent: unregistered


def test_a_write_to_a_lost_connection_is_dropped_as_before():
    server, peer, _ = connection()
    server.connected = False
    server.write(b"late")
    assert (server.dataBuffer, server._tempDataBuffer) == (b"", [])


def test_the_server_builds_its_connections_so():
    code = "from twisted.internet import tcp; print(tcp.Port.transport.__name__)"
    assert printed_by_loaded_server(code) == ["DirectWriteServer"]
