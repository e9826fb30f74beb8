"""Unmasking the frames WebSocket clients send, cheaper for small frames.

Every frame a client sends is masked (RFC 6455, 5.3: XOR with a 4-byte key
of the frame's own). autobahn, Daphne's framing, builds a native (cffi)
masker for each frame: 4-5 µs a frame of a one-event live message's 150
bytes, most of it building the masker, once per message the server
receives. A masker of Python integers (`IntegerXorMasker`) does it in about
1 µs up to about 1,500 bytes; past that autobahn's, whose cost hardly grows
with the length, is faster and is kept (`SMALL_FRAME`). `install`, called
when the ASGI application is loaded, makes autobahn use them.
"""

from __future__ import annotations

SMALL_FRAME = 1024  # bytes: smaller frames get an `IntegerXorMasker`


class IntegerXorMasker:
    """autobahn's masker interface (`process` the frame's payload in one or
    more pieces, `pointer` how much so far, `reset`), the XOR done on the
    piece as one integer."""

    __slots__ = ("_mask", "_pointer")

    def __init__(self, mask: bytes):
        self._mask = bytes(mask)
        self._pointer = 0

    def pointer(self) -> int:
        return self._pointer

    def reset(self) -> None:
        self._pointer = 0

    def process(self, data: bytes) -> bytes:
        length = len(data)
        start = self._pointer & 3  # a piece may begin anywhere in the key's cycle
        key = (self._mask[start:] + self._mask[:start]) * (length // 4 + 1)
        self._pointer += length
        unmasked = int.from_bytes(data, "little") ^ int.from_bytes(key[:length], "little")
        return unmasked.to_bytes(length, "little")


def xor_masker(mask: bytes, length: int | None = None):
    """A masker for a frame of `length` payload bytes (autobahn's
    `create_xor_masker`, with its arguments)."""
    if length is not None and length < SMALL_FRAME:
        return IntegerXorMasker(mask)
    from autobahn.websocket.xormasker import create_xor_masker

    return create_xor_masker(mask, length)


def install() -> None:
    """Make autobahn's WebSocket protocol build its maskers with `xor_masker`."""
    from autobahn.websocket import protocol

    protocol.create_xor_masker = xor_masker
