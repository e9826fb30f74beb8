"""`text_frames`: a whole small text message read in one step hands the
application what autobahn's own path does, counts it as it does, and
leaves every other frame to that path: fragments, binary and control
frames, larger or split frames, invalid UTF-8, frames over the limits.
A text message sent in one step puts on the wire the bytes autobahn's
path puts there, counted alike; other messages go that path."""

from __future__ import annotations

import struct

import pytest
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from autobahn.websocket.protocol import WebSocketProtocol
from twisted.internet.testing import StringTransport

from loopguard_site import text_frames

text_frames.install()
AUTOBAHN_READ = WebSocketProtocol.processData.__wrapped__
AUTOBAHN_SEND = WebSocketProtocol.sendMessage.__wrapped__

HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def frame(payload: bytes, opcode: int = 1, fin: bool = True, *, mask: bytes = b"\x11\x22\x33\x44") -> bytes:
    """A client's frame (masked, as RFC 6455 wants), the shortest length encoding."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class Wire(StringTransport):
    def unregisterProducer(self):  # noqa: N802 - Twisted's name
        self.producer = None  # autobahn unregisters on closing whether or not it registered


class Recorder(WebSocketServerProtocol):
    def onMessage(self, payload, isBinary):  # noqa: N802, N803 - autobahn's names
        self.heard.append((payload, isBinary))


class AutobahnOnly(Recorder):
    processData = AUTOBAHN_READ
    sendMessage = AUTOBAHN_SEND


def opened(protocol_class: type, **options) -> tuple[WebSocketServerProtocol, StringTransport, list]:
    factory = WebSocketServerFactory("ws://localhost")
    factory.setProtocolOptions(failByDrop=False, **options)  # a refusal sends its close code
    factory.protocol = protocol_class
    protocol = factory.buildProtocol(None)
    protocol.heard = []
    transport = Wire()
    protocol.makeConnection(transport)
    protocol.dataReceived(HANDSHAKE)
    assert protocol.state == WebSocketProtocol.STATE_OPEN
    transport.clear()
    return protocol, transport, protocol.heard


def counted(protocol) -> dict:
    stats = protocol.trafficStats
    return {
        f"{way}{name}": getattr(stats, f"{way}{name}")
        for way in ("incoming", "outgoing")
        for name in (
            "OctetsWireLevel",
            "OctetsWebSocketLevel",
            "OctetsAppLevel",
            "WebSocketFrames",
            "WebSocketMessages",
        )
    }


def close_code(wire: bytes) -> bytes:
    """The status code of the close frame the server sent first (its reason after it is autobahn's text)."""
    assert wire[0] == 0x88
    return wire[2:4]


def one_event(n: int) -> bytes:
    return b'{"seq": %d, "event": {"type": "content", "text": "caf\xc3\xa9 \xe6\x80\x9d"}}' % n


MIXED = [
    [frame(one_event(1))],  # under 126 bytes
    [frame(one_event(2) + b" " * 150)],  # a 16-bit length
    [frame(one_event(3)) + frame(one_event(4))],  # two in one read
    [frame(one_event(5))[:9], frame(one_event(5))[9:]],  # split across reads
    [frame(b"x" * 3000)],  # past SMALL_FRAME: autobahn's path
    [frame(b"frag", fin=False), frame(b"mented", opcode=0)],  # a fragmented message
    [frame(b"\x00\x01binary", opcode=2)],
    [frame(b"ping!", opcode=9)],  # answered with a pong
    [frame(b"")],  # an empty text message
    [frame("ünïcode ✓".encode())],
]


def test_every_frame_is_heard_and_counted_as_autobahn_alone_hears_it():
    fast, fast_wire, fast_heard = opened(Recorder)
    plain, plain_wire, plain_heard = opened(AutobahnOnly)
    taken = []
    read = text_frames.read_text_message

    def spying(protocol) -> bool:
        taken.append(read(protocol))
        return taken[-1]

    text_frames.read_text_message = spying
    try:
        for reads in MIXED:
            for data in reads:
                fast.dataReceived(data)
                plain.dataReceived(data)
    finally:
        text_frames.read_text_message = read
    assert fast_heard == plain_heard
    heard_first = [payload for payload, _ in fast_heard][:5]
    assert heard_first == [one_event(1), one_event(2) + b" " * 150, *map(one_event, (3, 4, 5))]
    assert len(fast_heard) == 10
    assert counted(fast) == counted(plain)
    assert fast_wire.value() == plain_wire.value()  # the pong, and nothing else
    assert fast_wire.value().startswith(b"\x8a\x05ping!")
    # read in one step: events 1 to 4, the empty and the unicode messages (event 5's
    # first read, its head without all its payload, went to autobahn, which read the rest)
    assert taken.count(True) == 6


INVALID_UTF8, TOO_BIG, PROTOCOL_ERROR = b"\x03\xef", b"\x03\xf1", b"\x03\xea"  # close codes 1007, 1009, 1002


@pytest.mark.parametrize(
    ("data", "options", "code"),
    [
        (frame(b'{"text": "\xed\xa0\x80"}'), {}, INVALID_UTF8),  # a surrogate
        (frame(b"\xff"), {}, INVALID_UTF8),
        (frame(b"caf\xc3"), {}, INVALID_UTF8),  # ends inside a character
        (frame(one_event(1)), {"maxFramePayloadSize": 50}, TOO_BIG),
        (frame(one_event(1)), {"maxMessagePayloadSize": 50}, TOO_BIG),
        (b"\x81\x05hello", {}, PROTOCOL_ERROR),  # unmasked
        (b"\x81\xfe\x00\x05" + b"\x00" * 4 + b"hello", {}, PROTOCOL_ERROR),  # 5 bytes in the 16-bit form
    ],
    ids=["surrogate", "bad byte", "cut character", "frame limit", "message limit", "unmasked", "long length form"],
)
def test_a_frame_autobahn_refuses_fails_the_connection_as_autobahn_alone_fails_it(data, options, code):
    fast, fast_wire, fast_heard = opened(Recorder, **options)
    plain, plain_wire, plain_heard = opened(AutobahnOnly, **options)
    fast.dataReceived(data)
    plain.dataReceived(data)
    assert fast_heard == plain_heard == []
    assert fast_wire.value() == plain_wire.value()
    assert close_code(fast_wire.value()) == code


def test_an_observer_of_messages_still_hears_each_one():
    fast, _, fast_heard = opened(Recorder)
    observed = []
    fast.on("message", lambda payload, is_binary: observed.append(payload))
    fast.dataReceived(frame(one_event(1)))
    assert fast_heard == [(one_event(1), False)]
    assert observed == [one_event(1)]


SENDS = [
    {"payload": b'{"ack": 12}'},
    {"payload": b""},
    {"payload": "ünïcode ✓".encode() * 20},  # a 16-bit length
    {"payload": b"y" * 70_000},  # a 64-bit length: autobahn's path
    {"payload": b"z" * 300, "fragmentSize": 100},
    {"payload": b"\x00\x01", "isBinary": True},
    {"payload": b"sync", "sync": True},
]


@pytest.mark.parametrize(
    ("options", "in_one_step"),
    [({}, 3), ({"autoFragmentSize": 150}, 2), ({"maskServerFrames": True}, 0)],
    ids=["defaults", "auto fragments", "masked server frames"],
)
def test_every_message_sent_puts_autobahns_bytes_on_the_wire(options, in_one_step):
    fast, fast_wire, _ = opened(Recorder, **options)
    plain, plain_wire, _ = opened(AutobahnOnly, **options)
    sent = []
    send = text_frames.send_text_message

    def spying(protocol, payload) -> bool:
        sent.append(send(protocol, payload))
        return sent[-1]

    text_frames.send_text_message = spying
    try:
        for arguments in SENDS:
            fast.sendMessage(**arguments)
            plain.sendMessage(**arguments)
    finally:
        text_frames.send_text_message = send
    if options.get("maskServerFrames"):  # each frame under a random mask of its own
        assert len(fast_wire.value()) == len(plain_wire.value())
    else:
        assert fast_wire.value() == plain_wire.value()
    assert counted(fast) == counted(plain)
    assert sent.count(True) == in_one_step


def test_a_text_message_sent_in_one_step_is_one_final_text_frame():
    fast, wire, _ = opened(Recorder)
    fast.sendMessage(b'{"ack": 12}')
    fast.sendMessage("ü".encode() * 100)
    assert wire.value() == b'\x81\x0b{"ack": 12}' + b"\x81\x7e\x00\xc8" + "ü".encode() * 100
