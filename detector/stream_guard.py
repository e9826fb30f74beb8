"""Loop protection around an OpenAI or Anthropic SDK stream iterator, in the
caller's own process.

`guard_openai_stream(stream)` / `guard_anthropic_stream(stream)` yield every
chunk unchanged and raise `LoopDetected` once a local `Monitor` or the lab
(through a `LiveSession`) says stop. Chunks become events with the
importers' own stream readers (`openai_chat.ChunkReader`,
`anthropic_messages.EventReader`), so a stream guarded live gives the events
its recording gives when imported. An async stream (only `async for`) gets
an async guard, with the same behaviour. SDK chunk objects are read with
`model_dump()`; plain dicts are taken as they are.

When a chunk's events fire a stop-level detection, that chunk is still
yielded: the caller has then read the channel up to the detection's `at`,
the point where event-format.md says a live stream is cut. The upstream is
closed at once (`stream.close()`, else `stream.response.close()`) and the
next pull raises `LoopDetected` without reading it again. At the end of the
stream the reader's last events are checked and the `LiveSession` flushed,
so a loop found on the final events still raises instead of ending the
iteration. Cost per chunk: the reader's O(chunk size) plus the Monitor's;
with `live`, the events go in the `LiveSession`'s batches (one message per
`linger`, at once after tool calls and finishes), the batch waiting when the
local Monitor stops the stream is flushed then. Memory: the Monitor's, events
are not kept.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator

from .importers import anthropic_messages, openai_chat
from .importers.builder import TranscriptBuilder
from .importers.source import Source
from .live_client import LiveSession
from .loop_signal import STOP_ACTIONS, LoopDetected
from .monitor import Monitor


def chunk_dict(chunk: object) -> dict:
    """A stream chunk as a dict: an SDK model's `model_dump()`, or the dict itself."""
    if isinstance(chunk, dict):
        return chunk
    dump = getattr(chunk, "model_dump", None)
    if callable(dump):
        return dump()
    raise TypeError(f"a stream chunk must be a dict or an SDK model with model_dump(), not {type(chunk).__name__}")


class StreamWatch:
    """What a stream's chunks say: the reader's events fed to the Monitor
    and / or the LiveSession. `detections`: the local Monitor's, as dicts
    (the lab's are in `live.detections`); `chunks`: how many were read;
    `stop`: the `LoopDetected` to raise, once there is one."""

    def __init__(
        self,
        stream: object,
        reader: type,
        fmt: str,
        *,
        monitor: Monitor | None,
        live: LiveSession | None,
        stop_actions: Iterable[str],
    ):
        self.stream = stream
        self._builder = TranscriptBuilder(Source(f"<{fmt} stream>", ""), fmt, "")
        self._reader = reader(self._builder)
        self.monitor = monitor
        self.live = live
        self._own_monitor = monitor is None and live is None  # made for the stream's model at its first events
        self.stop_actions = tuple(stop_actions)
        self.detections: list[dict] = []
        self.chunks = 0
        self.stop: LoopDetected | None = None
        self._ended = False

    def _take(self, chunk: object) -> None:
        """One chunk read from the upstream."""
        self.chunks += 1
        self._reader.feed(chunk_dict(chunk), self.chunks)
        self._check(final=False)

    def _end(self) -> None:
        """The upstream has no more chunks."""
        self._ended = True
        self._reader.close()
        self._check(final=True)

    def _check(self, *, final: bool) -> None:
        """Feed the events the reader produced since the last check."""
        events, self._builder.events = self._builder.events, []
        if events and self._own_monitor and self.monitor is None:
            self.monitor = Monitor.for_model(self._builder.model or "")
        if self.monitor is not None:
            for event in events:
                for detection in self.monitor.feed(event):
                    found = detection.to_dict()
                    self.detections.append(found)
                    if self.stop is None and detection.action in self.stop_actions:
                        self.stop = LoopDetected(found, origin="local")
        if self.live is not None:
            try:
                if events:
                    self.live.send(events)
                if final or self.stop is not None:
                    self.live.flush()  # the lab gets every event up to the end, or the local stop, at once
                elif not events:
                    self.live.poll()
            except LoopDetected as signal:
                self.stop = self.stop or signal


class GuardedStream(StreamWatch):
    """The guarded iterator over a (synchronous) SDK stream."""

    def __init__(self, stream: Iterable, reader: type, fmt: str, **options):
        super().__init__(stream, reader, fmt, **options)
        self._chunks: Iterator = iter(stream)

    def __iter__(self) -> GuardedStream:
        return self

    def __next__(self) -> object:
        if self.stop is not None:
            raise self.stop
        if self._ended:
            raise StopIteration
        try:
            chunk = next(self._chunks)
        except StopIteration:
            self._end()
            if self.stop is not None:
                raise self.stop from None
            raise
        self._take(chunk)
        if self.stop is not None:
            self.close()
        return chunk

    def close(self) -> None:
        """Close the upstream stream (its HTTP response)."""
        close = getattr(self.stream, "close", None)
        if not callable(close):
            close = getattr(getattr(self.stream, "response", None), "close", None)
        if callable(close):
            close()

    def __enter__(self) -> GuardedStream:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class AsyncGuardedStream(StreamWatch):
    """The guarded iterator over an async SDK stream (`AsyncOpenAI`,
    `AsyncAnthropic`). With `live`, the lab is called in a worker thread so
    the event loop never waits on the network."""

    def __init__(self, stream: AsyncIterable, reader: type, fmt: str, **options):
        super().__init__(stream, reader, fmt, **options)
        self._chunks: AsyncIterator = aiter(stream)

    def __aiter__(self) -> AsyncGuardedStream:
        return self

    async def __anext__(self) -> object:
        if self.stop is not None:
            raise self.stop
        if self._ended:
            raise StopAsyncIteration
        try:
            chunk = await anext(self._chunks)
        except StopAsyncIteration:
            await self._step(self._end)
            if self.stop is not None:
                raise self.stop from None
            raise
        await self._step(self._take, chunk)
        if self.stop is not None:
            await self.aclose()
        return chunk

    async def _step(self, step: Callable, *args: object) -> None:
        if self.live is None:
            step(*args)
        else:
            await asyncio.to_thread(step, *args)

    async def aclose(self) -> None:
        """Close the upstream stream: its `close()` / `aclose()`, else its response's."""
        for target in (self.stream, getattr(self.stream, "response", None)):
            for name in ("close", "aclose"):
                method = getattr(target, name, None)
                if callable(method):
                    result = method()
                    if inspect.isawaitable(result):
                        await result
                    return

    async def __aenter__(self) -> AsyncGuardedStream:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


def guarded(stream: object, reader: type, fmt: str, **options) -> GuardedStream | AsyncGuardedStream:
    """The right guard for `stream`: async when it can only be iterated with `async for`."""
    if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
        return AsyncGuardedStream(stream, reader, fmt, **options)
    return GuardedStream(stream, reader, fmt, **options)


def guard_openai_stream(
    stream: Iterable | AsyncIterable,
    *,
    monitor: Monitor | None = None,
    live: LiveSession | None = None,
    stop_actions: Iterable[str] = STOP_ACTIONS,
) -> GuardedStream | AsyncGuardedStream:
    """Guard an OpenAI Chat Completions stream (`create(..., stream=True)`
    of `OpenAI` or `AsyncOpenAI`, or chunk dicts). Without `monitor` and
    `live`, a local Monitor of the profile matching the stream's model watches it."""
    return guarded(
        stream, openai_chat.ChunkReader, openai_chat.NAME, monitor=monitor, live=live, stop_actions=stop_actions
    )


def guard_anthropic_stream(
    stream: Iterable | AsyncIterable,
    *,
    monitor: Monitor | None = None,
    live: LiveSession | None = None,
    stop_actions: Iterable[str] = STOP_ACTIONS,
) -> GuardedStream | AsyncGuardedStream:
    """Guard an Anthropic Messages stream (`messages.create(..., stream=True)`
    of `Anthropic` or `AsyncAnthropic`, or event dicts); as `guard_openai_stream`."""
    return guarded(
        stream,
        anthropic_messages.EventReader,
        anthropic_messages.NAME,
        monitor=monitor,
        live=live,
        stop_actions=stop_actions,
    )
