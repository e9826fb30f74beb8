"""`parse_blocks` hands over exactly the events `parse_bytes` returns, a
block at a time, whatever the block size: the streaming formats (`events`,
`openai`) as they parse, the others parsed whole. Bad input in a late
block is the same error, naming the same line, once that block is reached."""

from __future__ import annotations

import json

import pytest

from detector.importers import TranscriptError, parse_blocks, parse_bytes
from tests.detector.importers.test_samples import SAMPLES
from tests.shared_paths import FORMATS_DIR


def read_all(data: bytes, name: str, size: int) -> tuple[list[dict], list[int], str | None, str | None]:
    """(header and events, block lengths, model, title) of `parse_blocks`."""
    read = parse_blocks(data, name, size=size)
    blocks = list(read.blocks)
    return (
        [read.header(), *(e for block in blocks for e in block)],
        [len(b) for b in blocks],
        read.model(),
        read.title(),
    )


@pytest.mark.parametrize("size", [1, 3, 10_000])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_sample_in_blocks_is_the_whole_transcript(name, size):
    data = (FORMATS_DIR / name).read_bytes()
    whole = parse_bytes(data, name)

    events, lengths, model, title = read_all(data, name, size)

    assert (events, model, title) == (whole.events, whole.model, whole.title)
    # a stream's block ends after the record that fills it, which may add two events
    assert all(size <= length <= size + 1 for length in lengths[:-1]) and 0 < lengths[-1] <= size + 1


def events_lines(count: int) -> list[dict]:
    header = {"type": "session", "model": "m-1", "meta": {"title": "big one"}}
    return [header, *({"type": "content", "text": f"chunk {n}"} for n in range(1, count + 1))]


def openai_lines(count: int) -> list[dict]:
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-x"}
    deltas = [{"index": 0, "delta": {"content": f"part {n} "}} for n in range(count)]
    return [{**chunk, "choices": [delta]} for delta in deltas]


@pytest.mark.parametrize("lines", [events_lines(25), openai_lines(25)])
def test_a_large_stream_comes_in_blocks_of_the_size_asked(lines):
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    whole = parse_bytes(data, "big.jsonl")

    events, lengths, model, title = read_all(data, "big.jsonl", 10)

    assert events == whole.events
    assert (model, title) == (whole.model, whole.title)
    assert lengths == [10, 10, len(whole.events) - 21]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (events_lines(40), "big.jsonl: line 31: invalid JSON: Expecting value (column 1)"),
        (openai_lines(40), "big.jsonl: line 31: invalid JSON: Expecting value (column 1)"),
        (
            [*events_lines(29), {"type": "session"}],
            "big.jsonl: line 31: field type: a session event must be the first event",
        ),
    ],
)
def test_bad_input_in_a_late_block_names_its_line_when_that_block_is_reached(lines, message):
    text = [json.dumps(line) for line in lines]
    if "invalid" in message:
        text[30] = "not json"
    read = parse_blocks(("\n".join(text) + "\n").encode(), "big.jsonl", size=10)

    assert [len(block) for block in (next(read.blocks), next(read.blocks))] == [10, 10]
    with pytest.raises(TranscriptError) as caught:
        list(read.blocks)
    assert str(caught.value) == message
