"""The small text messages of WebSocket clients, read and sent in one step.

autobahn, Daphne's framing, reads each frame through a chain of a dozen
Python calls (`processData`, `onFrameBegin`, `onMessageBegin`,
`onMessageFrameBegin`, `onFrameData`, `onMessageFrameData`, `onFrameEnd`,
`onMessageFrameEnd`, `onMessageEnd`, and a `message` event fired for
observers nobody registers): 15 % of a loaded server's event loop with
one-event live messages (BENCHMARKS.md, section 4). `read_text_message`,
tried first for each frame, takes the common case whole: a final,
uncompressed, masked text frame of under `frame_masks.SMALL_FRAME` bytes,
wholly received, with valid UTF-8, on an open connection that logs no
frames and tracks no timings. It unmasks it, counts it in the traffic
statistics and hands the payload to `_onMessage`, as that chain does at
its end. Anything else (a frame not wholly received, a fragment, a binary
or control frame, compression, invalid UTF-8, a frame over the
connection's limits, an observer of `message`) goes through autobahn's own
path, which refuses what it refuses as before.

Sending is the same story, shorter: `sendMessage`, `sendFrame` and
`sendData`, which formats a debug line's arguments for every frame
whether or not debug is logged. `send_text_message` writes an
unfragmented, unmasked, uncompressed text frame of up to 65,535 bytes
straight to the transport, counted as autobahn counts it; anything else
goes autobahn's way. `install`, called when the ASGI application is
loaded, makes autobahn try both first.
"""

from __future__ import annotations

from codecs import utf_8_decode

from loopguard_site.frame_masks import SMALL_FRAME, IntegerXorMasker

FINAL_TEXT = 0x81  # the first byte of a final text frame: FIN, no RSV bits, opcode 1
MASKED = 0x80  # the top bit of the second byte


def read_text_message(protocol) -> bool:
    """Read the frame at the head of `protocol.data` (an autobahn
    `WebSocketProtocol` between frames) if it is a whole small text
    message; whether it was."""
    data = protocol.data
    if len(data) < 6 or data[0] != FINAL_TEXT:
        return False
    length = data[1] ^ MASKED  # 128 or more: an unmasked frame
    start = 6
    if length == 126:
        if len(data) < 8:
            return False
        length, start = int.from_bytes(data[2:4], "big"), 8
        if length < 126:  # not the shortest encoding: autobahn's path refuses it
            return False
    elif length > 126:
        return False
    end = start + length
    if (
        length >= SMALL_FRAME
        or len(data) < end
        or 0 < protocol.maxFramePayloadSize < length
        or 0 < protocol.maxMessagePayloadSize < length
    ):
        return False
    payload = IntegerXorMasker(data[start - 4 : start]).process(data[start:end])
    try:
        utf_8_decode(payload, "strict", True)
    except UnicodeDecodeError:
        return False  # autobahn's path fails the connection
    protocol.data = data[end:]
    stats = protocol.trafficStats
    stats.incomingOctetsWebSocketLevel += length
    stats.incomingOctetsAppLevel += length
    stats.incomingWebSocketFrames += 1
    stats.incomingWebSocketMessages += 1
    if protocol.autoPingTimeoutCall and protocol.autoPingRestartOnAnyTraffic:
        protocol._cancelAutoPingTimeoutCall()
    protocol._onMessage(payload, False)
    return True


def _between_plain_frames(protocol) -> bool:
    """Whether autobahn would read the next frame of `protocol` through its
    whole chain with nothing but the message at its end to show for it."""
    return (
        protocol.current_frame is None
        and not protocol.inside_message
        and protocol.state == protocol.STATE_OPEN
        and not protocol.failedByMe
        and protocol.factory.isServer
        and protocol.applyMask
        and protocol._perMessageCompress is None
        and not protocol.logFrames
        and not protocol.trackedTimings
        and not (protocol._listeners and protocol._listeners.get("message"))
    )


def send_text_message(protocol, payload: bytes) -> bool:
    """Write `payload` as one text frame on `protocol` (an open autobahn
    `WebSocketProtocol` of a server) if autobahn would send it as such, with
    nothing queued before it; whether it did."""
    length = len(payload)
    if (
        length > 0xFFFF
        or protocol.state != protocol.STATE_OPEN
        or protocol.send_queue
        or 0 < protocol.maxMessagePayloadSize < length
        or 0 < protocol.autoFragmentSize < length
        or not protocol.factory.isServer
        or protocol.maskServerFrames
        or protocol._perMessageCompress is not None
        or protocol.logFrames
        or protocol.logOctets
        or protocol.trackedTimings
    ):
        return False
    head = bytes((FINAL_TEXT, length)) if length < 126 else bytes((FINAL_TEXT, 126)) + length.to_bytes(2, "big")
    protocol.transport.write(head + payload)
    stats = protocol.trafficStats
    stats.outgoingOctetsAppLevel += length
    stats.outgoingOctetsWebSocketLevel += length
    stats.outgoingWebSocketFrames += 1
    stats.outgoingWebSocketMessages += 1
    stats.outgoingOctetsWireLevel += len(head) + length
    return True


def install() -> None:
    """Make autobahn's WebSocket protocol try `read_text_message` before each
    frame it reads and `send_text_message` for each message it sends."""
    from autobahn.websocket.protocol import WebSocketProtocol

    read_frame, send_message = WebSocketProtocol.processData, WebSocketProtocol.sendMessage
    if hasattr(read_frame, "__wrapped__"):  # installed already
        return

    def processData(self) -> bool:  # noqa: N802 - autobahn's name
        if _between_plain_frames(self) and read_text_message(self):
            return len(self.data) > 0
        return read_frame(self)

    def sendMessage(self, payload, isBinary=False, fragmentSize=None, sync=False, doNotCompress=False):  # noqa: N802, N803
        plain_text = not isBinary and fragmentSize is None and not sync and type(payload) is bytes
        if not (plain_text and send_text_message(self, payload)):
            send_message(self, payload, isBinary, fragmentSize, sync, doNotCompress)

    processData.__wrapped__ = read_frame  # autobahn's own
    sendMessage.__wrapped__ = send_message
    WebSocketProtocol.processData = processData
    WebSocketProtocol.sendMessage = sendMessage
