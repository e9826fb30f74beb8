"""The channel layers: channels_redis' pub/sub layer (the full mode's) and
channels' in-memory layer (the embedded mode's), each with `group_send_many`,
many group sends at once (the live ingest forwards a whole batch of
messages to their viewers with it).

channels_redis' `group_send` holds its connection's lock for the PUBLISH's
whole round trip, so a process's sends queue behind each other, each
waiting for the event loop to come round again: under bench/live_load.py's
250 producers a forward waited 65-115 ms (p90) and 160-270 ms (p99), timed
in the Daphne processes (BENCHMARKS.md, section 4). `group_send_many` sends
them in one round trip, as one bundle: a single PUBLISH, to a channel that
every process with a group member subscribes to (`_DrainingLoopLayer.group_add`);
each process hands the bundle's messages to its own members of their groups
and passes over the rest. A live batch's copies for its viewers thus cost
one message to publish and one to parse in each process, not one per
session: Redis's replies are parsed in Python, 10 % of a loaded server's
event loop when each copy came on its own (BENCHMARKS.md, section 4). Every
such process reads every bundle, its members' or not: a look-up a copy.

Each process reads its subscriptions without a timeout per message
(`_DrainingShard`): channels_redis' reader asks redis-py for each message
with a 0.1 s timeout (a timer armed and cancelled per message) and has it
build a dict and record metrics; a viewer's copy of every live batch comes
this way.

A consumer may have its channel's messages handed to it as they arrive
(`new_channel_delivered`) instead of reading them with `receive`: a live
socket waits for its client's frames and the layer's messages at once,
and a `receive` of its own would cost a task woken for every viewer's copy
before the consumer's task is woken for it.

The embedded mode's layer is made safe for senders on other threads.

The in-memory layer keeps one `asyncio.Queue` per channel, bound to the
event loop of the consumer that awaits it (Daphne's). The embedded Celery
worker sends from its own threads through `async_to_sync`, that is from
another event loop, and asyncio is not thread-safe: the put would not wake
the waiting consumer, and the message would sit until something else woke
Daphne's loop. Such a send is handed over to the receiving loop instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence

from channels.layers import InMemoryChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer, RedisSingleShardConnection
from channels_redis.utils import _wrap_close

log = logging.getLogger(__name__)


class _DrainingShard(RedisSingleShardConnection):
    """channels_redis' connection to one Redis server, whose reader waits for
    the next reply without a timeout and hands a published message to its
    channels' queues as it comes (redis-py's `get_message` only for the
    replies that change the subscriptions)."""

    async def _do_receiving(self) -> None:
        while True:
            try:
                if self._pubsub and self._pubsub.subscribed:
                    # block: no timer per read; redis-py reconnects and subscribes again as before
                    response = await self._pubsub.parse_response(block=True)
                    if isinstance(response, list) and len(response) == 3 and response[0] == b"message":
                        if response[1] == self.channel_layer.bundles:
                            for channel, data in self.channel_layer.channel_layer.deserialize(response[2])["b"]:
                                self._receive_message({"channel": channel, "data": data})
                        else:
                            self._receive_message({"channel": response[1], "data": response[2]})
                    else:
                        self._receive_message(await self._pubsub.handle_message(response, True))
                else:
                    await asyncio.sleep(0.1)
            except Exception:  # as channels_redis' reader: logged, and it reads on (a cancel ends it)
                log.exception("Unexpected exception in receive task")
                await asyncio.sleep(1)


class _DrainingLoopLayer(RedisPubSubLoopLayer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # no connection is made before the first use: the shards can be replaced
        self._shards = [_DrainingShard(shard.host, self) for shard in self._shards]
        self.bundles = f"{self.prefix}__bundles__".encode()  # the channel of `group_send_many`'s bundles

    async def group_add(self, group: str, channel: str) -> None:
        # the bundles of the group's server first: subscribed before the group, none of its messages is missed
        await self._get_shard(self._get_group_channel_name(group)).subscribe(self.bundles)
        await super().group_add(group, channel)


class _Delivery:
    """A delivered channel's stand-in for its queue in the loop layer's
    `channels` (where channels_redis' reader puts each message of the
    channel and of its groups, as bytes): hands each one on."""

    __slots__ = ("put_nowait",)

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self.put_nowait = deliver


class PipelinedPubSubChannelLayer(RedisPubSubChannelLayer):
    def _get_layer(self) -> RedisPubSubLoopLayer:
        # channels_redis' own, with `_DrainingLoopLayer` for its loop layer
        loop = asyncio.get_running_loop()
        try:
            return self._layers[loop]
        except KeyError:
            layer = self._layers[loop] = _DrainingLoopLayer(*self._args, **self._kwargs, channel_layer=self)
            _wrap_close(self, loop)
            return layer

    async def new_channel_delivered(self, deliver: Callable[[bytes], None]) -> str:
        """`new_channel()`, whose messages (its own and its groups') are
        handed to `deliver` on this event loop as the reader gets them, in
        the order published, still encoded (`deserialize` them), instead of
        waiting for `receive`. The caller ends it with `channel_discard`."""
        layer = self._get_layer()
        channel = await layer.new_channel()
        layer.channels[channel] = _Delivery(deliver)  # no message can be queued yet: no await since
        return channel

    async def channel_discard(self, channel: str) -> None:
        """Unsubscribe a delivered channel (what a cancelled `receive` does for the others)."""
        layer = self._get_layer()
        if layer.channels.pop(channel, None) is not None:
            await layer._get_shard(channel).unsubscribe(channel)

    async def group_send_many(self, sends: Sequence[tuple[str, dict]]) -> None:
        """`group_send(group, message)` for each pair, in order, as one
        bundle per Redis server (one PUBLISH)."""
        layer = self._get_layer()  # this event loop's
        by_shard = defaultdict(list)
        for group, message in sends:
            channel = layer._get_group_channel_name(group)
            by_shard[layer._get_shard(channel)].append((channel, self.serialize(message)))
        for shard, bundle in by_shard.items():
            await shard.publish(layer.bundles, self.serialize({"b": bundle}))


class ThreadSafeInMemoryChannelLayer(InMemoryChannelLayer):
    async def send(self, channel: str, message: dict) -> None:
        queue = self.channels.get(channel)
        owner = getattr(queue, "_loop", None)  # asyncio binds a queue to a loop once someone awaits it
        if owner is None or owner is asyncio.get_running_loop() or not owner.is_running():
            await super().send(channel, message)
            return
        handover = asyncio.run_coroutine_threadsafe(super().send(channel, message), owner)
        await asyncio.wrap_future(handover)

    async def group_send_many(self, sends: Sequence[tuple[str, dict]]) -> None:
        for group, message in sends:
            await self.group_send(group, message)
