"""The SDK stream wrappers with a local Monitor: recorded OpenAI and
Anthropic streams pass through unchanged and give the importers' events; a
real looping corpus row, streamed as OpenAI chunks, raises `LoopDetected`
right after the chunk that completes the loop and closes the upstream."""

from __future__ import annotations

import asyncio
import json

import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.chat import ChatCompletionChunk

from detector.importers import parse_path
from detector.loop_signal import LoopDetected
from detector.monitor import Monitor
from detector.stream_guard import AsyncGuardedStream, guard_anthropic_stream, guard_openai_stream
from tests.openai_stub import StubUpstream, corpus_row, openai_chunks, reference_stop, row_events
from tests.shared_paths import shared_path

OPENAI_SAMPLE = shared_path("formats", "openai_stream", "vercel__ai__deepseek-tool-call.chunks.txt")
ANTHROPIC_SAMPLE = shared_path("formats", "anthropic_stream", "vercel__ai__anthropic-clear-thinking.1.chunks.txt")
LOOP_ROW = "ae-qwen15-1.8b-agile-numbered"  # "4. Agile\n5. Agile\n...", Qwen1.5-1.8B-Chat
NORMAL_ROW = "ae-gpt4turbo-sudoku-grids"  # repeated grid lines, not a loop


@pytest.fixture(scope="module")
def loop() -> tuple[dict, int, dict]:
    """The looping row, the index of the event (= chunk) the default profile
    stops it at, and that detection."""
    row = corpus_row(LOOP_ROW)
    index, detection = reference_stop(row_events(row))
    assert (detection["detector"], detection["channel"], detection["at"]) == ("text_loop", "content", 4 * index)
    return row, index, detection


class RecordingMonitor(Monitor):
    """A Monitor that keeps what it was fed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fed: list[dict] = []

    def feed(self, event: dict) -> list:
        self.fed.append(event)
        return super().feed(event)


class Upstream:
    """An SDK-like stream over chunks: counts the pulls, records close()."""

    def __init__(self, chunks: list):
        self.chunks = chunks
        self.pulled = 0
        self.closed = 0

    def __iter__(self):
        for item in self.chunks:
            self.pulled += 1
            yield item

    def close(self) -> None:
        self.closed += 1


def sample_records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def content_of(chunks: list) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks)


@pytest.mark.parametrize(
    ("guard", "path"), [(guard_openai_stream, OPENAI_SAMPLE), (guard_anthropic_stream, ANTHROPIC_SAMPLE)]
)
def test_recorded_streams_pass_through_unchanged_and_give_the_importers_events(guard, path):
    records = sample_records(path)
    monitor = RecordingMonitor("default")
    upstream = Upstream(records)

    passed = list(guard(upstream, monitor=monitor))

    assert len(passed) == len(records) and all(a is b for a, b in zip(passed, records, strict=True))
    assert monitor.fed == parse_path(path).events[1:]  # the importer's events, without its session header
    assert upstream.closed == 0


def test_a_looping_openai_stream_raises_right_after_the_chunk_that_completes_the_loop(loop):
    row, index, stop = loop
    chunks = [ChatCompletionChunk.model_validate(c) for c in openai_chunks(row)]
    upstream = Upstream(chunks)
    guarded = guard_openai_stream(upstream)
    received = []

    with pytest.raises(LoopDetected) as caught:
        for item in guarded:
            received.append(item)

    # chunk 0 holds the role (a turn event), chunk k the k-th 4-character delta (event k)
    assert received == chunks[: index + 1]
    assert content_of(received) == row["text"][: stop["at"]]
    assert caught.value.detection == stop
    assert (caught.value.detector, caught.value.type, caught.value.action, caught.value.origin) == (
        "text_loop",
        stop["type"],
        "stop",
        "local",
    )
    assert str(caught.value) == f"text_loop (stop): {stop['message']}"
    assert (upstream.pulled, upstream.closed) == (index + 1, 1)
    assert guarded.detections[-1] == stop and all(d["action"] != "stop" for d in guarded.detections[:-1])
    with pytest.raises(LoopDetected):  # the signal stays: a caller that pulls again is told again
        next(guarded)
    assert upstream.pulled == index + 1


def test_a_normal_row_streams_through_with_no_detection():
    row = corpus_row(NORMAL_ROW)
    chunks = openai_chunks(row)
    guarded = guard_openai_stream(Upstream(chunks))

    passed = list(guarded)

    assert passed == chunks
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in passed) == row["text"]
    assert guarded.detections == []
    assert guarded.monitor.profile.name == "preview"  # chosen by the stream's model, gpt4_1106_preview


def test_the_actions_that_stop_are_configurable(loop):
    row, _, stop = loop
    chunks = openai_chunks(row)
    guarded = guard_openai_stream(Upstream(chunks), monitor=Monitor("default"), stop_actions=("force_text",))

    passed = list(guarded)

    assert len(passed) == len(chunks)
    assert stop in guarded.detections  # seen, but `stop` is not among the actions that raise


def test_a_real_openai_client_stream_is_closed_when_the_loop_is_caught(loop):
    row, _, stop = loop
    with StubUpstream(row) as stub:
        client = OpenAI(base_url=stub.url, api_key="sk-upstream", max_retries=0)
        stream = client.chat.completions.create(
            model=row["model"], messages=[{"role": "user", "content": "Hi"}], stream=True
        )
        received = []
        with pytest.raises(LoopDetected) as caught:
            for item in guard_openai_stream(stream):
                received.append(item)
        assert stub.done.wait(timeout=30)

    assert content_of(received) == row["text"][: stop["at"]]
    assert caught.value.detection == stop
    assert stream.response.is_closed
    assert stub.hung_up and stub.sent < len(stub.chunks)


def test_a_chunk_that_is_neither_a_dict_nor_an_sdk_model_is_refused():
    with pytest.raises(TypeError, match="a stream chunk must be a dict or an SDK model with model_dump"):
        list(guard_openai_stream(["data: {}"]))


def test_an_async_openai_client_stream_gets_the_async_guard_and_is_closed_at_the_loop(loop):
    row, index, stop = loop

    async def scenario(client: AsyncOpenAI) -> tuple[list, LoopDetected, object]:
        stream = await client.chat.completions.create(model=row["model"], messages=[], stream=True)
        received = []
        try:
            async for item in guard_openai_stream(stream):
                received.append(item)
        except LoopDetected as signal:
            return received, signal, stream
        raise AssertionError("no LoopDetected")

    with StubUpstream(row) as stub:
        received, signal, stream = asyncio.run(scenario(AsyncOpenAI(base_url=stub.url, api_key="sk", max_retries=0)))
        assert stub.done.wait(timeout=30)

    assert len(received) == index + 1 and content_of(received) == row["text"][: stop["at"]]
    assert (signal.detection, signal.origin) == (stop, "local")
    assert stream.response.is_closed
    assert stub.hung_up and stub.sent < len(stub.chunks)


def test_an_async_iterator_of_chunk_dicts_streams_through():
    chunks = openai_chunks(corpus_row(NORMAL_ROW))

    async def upstream():
        for item in chunks:
            yield item

    async def scenario() -> list:
        guarded = guard_openai_stream(upstream())
        assert isinstance(guarded, AsyncGuardedStream)
        return [item async for item in guarded]

    assert asyncio.run(scenario()) == chunks
