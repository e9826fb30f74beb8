"""The live consumers' dispatch loop (`_dispatch_in_turn`, in place of
channels' `await_many_dispatch`): every message of either source, and of
whoever puts them in its inbox (a delivered channel), dispatched one at a
time in the order it arrived; a failing source or handler ends it with
that error."""

from __future__ import annotations

import asyncio

import pytest
from channels.exceptions import StopConsumer

from loopguard_site.live.consumers import _dispatch_in_turn


def test_it_dispatches_every_message_one_at_a_time_in_arrival_order():
    async def scenario() -> tuple[list, int]:
        socket, layer = asyncio.Queue(), asyncio.Queue()
        dispatched, busy, most_busy = [], 0, 0

        async def dispatch(message: str) -> None:
            nonlocal busy, most_busy
            busy += 1
            most_busy = max(most_busy, busy)
            await asyncio.sleep(0)  # a handler that yields: the next message waits for it
            dispatched.append(message)
            if message == "socket 3":
                layer.put_nowait("layer 2")  # arrives while the socket's message 4 already waits
            busy -= 1
            if message == "layer 2":
                raise StopConsumer

        for message in ("socket 1", "socket 2"):
            socket.put_nowait(message)
        layer.put_nowait("layer 1")
        socket.put_nowait("socket 3")
        socket.put_nowait("socket 4")
        with pytest.raises(StopConsumer):
            await _dispatch_in_turn(asyncio.Queue(), [socket.get, layer.get], dispatch)
        return dispatched, most_busy

    dispatched, most_busy = asyncio.run(scenario())

    # what each source had waiting is read at once; "layer 2" came last
    assert dispatched == ["socket 1", "socket 2", "socket 3", "socket 4", "layer 1", "layer 2"]
    assert most_busy == 1


def test_a_source_that_fails_ends_it_with_its_error_after_what_came_before():
    async def scenario() -> list:
        socket = asyncio.Queue()
        socket.put_nowait("socket 1")
        dispatched = []

        async def broken_layer() -> dict:
            await asyncio.sleep(0)
            raise ConnectionError("redis gone")

        async def dispatch(message: str) -> None:
            dispatched.append(message)

        with pytest.raises(ConnectionError, match="redis gone"):
            await _dispatch_in_turn(asyncio.Queue(), [socket.get, broken_layer], dispatch)
        return dispatched

    assert asyncio.run(scenario()) == ["socket 1"]


def test_messages_handed_to_its_inbox_are_dispatched_in_turn_with_the_sources():
    async def scenario() -> list:
        socket, inbox = asyncio.Queue(), asyncio.Queue()
        dispatched = []

        def delivered(message: str) -> None:  # as a delivered channel hands the layer's messages on
            inbox.put_nowait((message, None))

        async def dispatch(message: str) -> None:
            await asyncio.sleep(0)
            dispatched.append(message)
            if message == "socket 1":
                delivered("layer 2")  # while the socket's message 2 already waits
            if message == "layer 2":
                raise StopConsumer

        delivered("layer 1")  # before the loop starts: first in the inbox
        socket.put_nowait("socket 1")
        socket.put_nowait("socket 2")
        with pytest.raises(StopConsumer):
            await _dispatch_in_turn(inbox, [socket.get], dispatch)
        return dispatched

    assert asyncio.run(scenario()) == ["layer 1", "socket 1", "socket 2", "layer 2"]
