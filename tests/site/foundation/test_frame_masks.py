"""The maskers the server unmasks client frames with give exactly RFC 6455's
XOR, whatever the pieces a frame's payload arrives in, and the server
loads them."""

from __future__ import annotations

import os
import random

import pytest
from autobahn.websocket.xormasker import create_xor_masker

from loopguard_site.frame_masks import SMALL_FRAME, IntegerXorMasker, xor_masker
from tests.loaded_server import printed_by_loaded_server


def rfc_xor(mask: bytes, data: bytes) -> bytes:
    return bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))


@pytest.mark.parametrize("length", [0, 1, 3, 4, 5, 150, 1023, 1024, 5000])
def test_a_payload_in_pieces_unmasks_as_one(length):
    rng = random.Random(length)
    mask, data = rng.randbytes(4), rng.randbytes(length)
    cuts = sorted(rng.sample(range(length + 1), min(4, length + 1)))
    masker = IntegerXorMasker(mask)
    pieces = []
    for start, end in zip([0, *cuts], [*cuts, length], strict=True):
        pieces.append(masker.process(data[start:end]))
        assert masker.pointer() == end
    assert b"".join(pieces) == rfc_xor(mask, data)
    masker.reset()
    assert masker.pointer() == 0
    assert masker.process(data) == rfc_xor(mask, data)


def test_small_frames_get_the_integer_masker_and_larger_ones_autobahns():
    mask = bytes([0x12, 0x34, 0x56, 0x78])
    assert type(xor_masker(mask, SMALL_FRAME - 1)) is IntegerXorMasker
    assert type(xor_masker(mask, SMALL_FRAME)) is type(create_xor_masker(mask, SMALL_FRAME))
    assert type(xor_masker(mask)) is type(create_xor_masker(mask))  # no length known
    data = os.urandom(SMALL_FRAME)
    assert xor_masker(mask, SMALL_FRAME).process(data) == rfc_xor(mask, data)


def test_the_server_unmasks_with_them():
    code = "from autobahn.websocket import protocol; print(protocol.create_xor_masker.__module__)"
    assert printed_by_loaded_server(code) == ["loopguard_site.frame_masks"]
