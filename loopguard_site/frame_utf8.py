"""The UTF-8 check of the text frames WebSocket clients send, without
giving the GIL away.

autobahn, Daphne's framing, checks every text message with its native
(cffi) validator: four C calls a message (reset, validate, two index
reads), and cffi releases the GIL around each. While the live ingest
thread runs the detectors, every release hands it the GIL and the event
loop waits to get it back: 0.4-0.9 ms a message by the clock beside a
thread running Python, against 1-2 µs of CPU (`bench/live_message_costs.py
--busy`; BENCHMARKS.md, section 4). Python's own UTF-8 decoder (`Utf8Check`)
checks the same bytes in C without releasing it, and rejects what the
native validator rejects (overlong forms, surrogates, code points past
U+10FFFF, bytes that cannot start or continue a character), at the
same byte. `install`, called when the ASGI application is loaded, makes
autobahn use it.
"""

from __future__ import annotations

from codecs import utf_8_decode


class Utf8Check:
    """autobahn's validator interface: `validate` the payload in one or more
    pieces, each answered (valid so far, ends on a code point, bytes of
    this piece read, bytes of the message read); `reset` for the next
    message. A piece that stops inside a character keeps its last bytes
    for the next one, as the native validator's state does."""

    __slots__ = ("_held", "_total")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._held = b""  # the start of a character cut by the end of the last piece
        self._total = 0  # bytes validated before this piece

    def validate(self, piece: bytes) -> tuple[bool, bool, int, int]:
        data = self._held + piece if self._held else piece
        try:
            _, read = utf_8_decode(data, "strict", False)
        except UnicodeDecodeError as exc:
            # The byte that rules the character out, as the native validator counts.
            failed = exc.end if exc.reason == "invalid continuation byte" else exc.start
            index = max(failed - len(self._held), 0)
            self._total += index
            return False, False, index, self._total
        self._held = held = bytes(data[read:])
        if held and not _may_complete(held):
            # The decoder waits for the rest of a character whose second byte
            # already rules it out (a surrogate's "\xed\xa0"); the native
            # validator rejects it at that byte.
            index = max(len(piece) - len(held) + 1, 0)
            self._total += index
            return False, False, index, self._total
        self._total += len(piece)
        return True, not held, len(piece), self._total


# A character's second byte at the bottom of each range the UTF-8 lead bytes
# allow for it (E0: A0-BF, F0: 90-BF, ED: 80-9F, F4: 80-8F, the rest 80-BF).
_SECOND_BYTES = (b"\x80", b"\x90", b"\xa0")


def _may_complete(held: bytes) -> bool:
    """Whether some bytes after `held`, the start of a character (its lead
    byte valid, the decoder said), make it a valid character."""
    length = 2 if held[0] < 0xE0 else 3 if held[0] < 0xF0 else 4
    for second in _SECOND_BYTES if len(held) == 1 else (b"",):
        try:
            utf_8_decode((held + second).ljust(length, b"\x80"), "strict", True)
        except UnicodeDecodeError:
            continue
        return True
    return False


def install() -> None:
    """Make autobahn's WebSocket protocol check text frames with `Utf8Check`."""
    from autobahn.websocket import protocol

    protocol.Utf8Validator = Utf8Check
