"""The UTF-8 check the server gives autobahn answers exactly as autobahn's
native validator, piece by piece, and the server uses it. (That it keeps
the GIL where the native one gives it away is a matter of time:
bench/live_message_costs.py --busy. A real server still drops a socket
that sends invalid UTF-8: tests/site/live/test_live_client_errors.py.)"""

from __future__ import annotations

import itertools
import random

from autobahn.nvx._utf8validator import Utf8Validator

from loopguard_site.frame_utf8 import Utf8Check
from tests.loaded_server import printed_by_loaded_server

# Bytes at the edges of what UTF-8 allows: ASCII, lead bytes of 2, 3 and 4
# bytes (with E0, ED, F0, F4, whose second byte has a narrower range),
# continuation bytes at each range's ends, and bytes that are never valid.
EDGE_BYTES = bytes(
    [0x41, 0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF5, 0xFF]
)


def answers(validator, pieces: list[bytes]) -> list[tuple]:
    """The validator's answer to each piece, up to the first that fails."""
    validator.reset()
    said = []
    for piece in pieces:
        said.append(validator.validate(piece))
        if not said[-1][0]:
            break
    return said


def test_every_short_sequence_in_two_pieces_is_answered_as_the_native_validator_does():
    native, check = Utf8Validator(), Utf8Check()
    compared = 0
    for length in range(1, 4):
        for sequence in itertools.product(EDGE_BYTES, repeat=length):
            data = bytes(sequence)
            for cut in range(length + 1):
                pieces = [data[:cut], data[cut:]]
                assert answers(check, pieces) == answers(native, pieces), (data, cut)
                compared += 1
    assert compared == sum(18**n * (n + 1) for n in (1, 2, 3))


def test_text_with_bad_bytes_in_many_pieces_is_answered_as_the_native_validator_does():
    rng = random.Random(20)
    text = "Loop? 循环 — ça boucle 🔁 again. ".encode() * 4
    for _ in range(400):
        data = bytearray(text)
        for _ in range(rng.randrange(3)):  # a few bytes changed: mostly invalid, sometimes not
            data[rng.randrange(len(data))] = rng.choice(EDGE_BYTES)
        cuts = sorted(rng.sample(range(len(data) + 1), 4))
        pieces = [bytes(data[a:b]) for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert answers(Utf8Check(), pieces) == answers(Utf8Validator(), pieces), (bytes(data), cuts)


def test_a_surrogate_is_refused_at_its_second_byte_and_a_character_cut_in_two_is_whole():
    check = Utf8Check()
    assert answers(check, [b"ok \xed", b"\xa0\x80"]) == [(True, False, 4, 4), (False, False, 0, 4)]
    assert answers(check, [b"ok \xed\xa0"]) == [(False, False, 4, 4)]
    assert answers(check, [b"\xf0\x9f", b"\x94", b"\x81!"]) == [
        (True, False, 2, 2),
        (True, False, 1, 3),
        (True, True, 2, 5),
    ]
    assert answers(check, [b"\xe2\x82"]) == [(True, False, 2, 2)]  # the message must not end there


def test_the_server_checks_text_frames_with_it():
    code = "from autobahn.websocket import protocol; print(protocol.Utf8Validator.__module__)"
    assert printed_by_loaded_server(code) == ["loopguard_site.frame_utf8"]
