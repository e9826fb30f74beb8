"""The pub/sub layer's reader (`channel_layers._DrainingShard`), which waits
for Redis's next reply without a timeout: every message of a group reaches
each channel in the order published (a delivered channel's handed to it
until it is discarded), and a subscription cut by Redis is made again, as
channels_redis' own reader does."""

from __future__ import annotations

import asyncio

import redis
import redis.asyncio as aioredis
from asgiref.sync import async_to_sync
from django.conf import settings

from loopguard_site.channel_layers import PipelinedPubSubChannelLayer

GROUP = "live.session.reader-test"
BUNDLES = "loopguard.reader-test__bundles__"  # the channel of `group_send_many`'s bundles, under the layers' prefix


def new_layer() -> PipelinedPubSubChannelLayer:
    return PipelinedPubSubChannelLayer(hosts=[{"address": settings.REDIS_URL}], prefix="loopguard.reader-test")


def test_every_message_reaches_each_channel_of_the_group_in_order(live_services):
    listening, sending = new_layer(), new_layer()

    async def scenario() -> tuple[list[int], list[int]]:
        first, second = await listening.new_channel(), await listening.new_channel()
        await listening.group_add(GROUP, first)
        await listening.group_add(GROUP, second)
        try:
            await sending.group_send_many([(GROUP, {"type": "live.forward", "n": n}) for n in range(300)])
            await sending.send(first, {"type": "live.forward", "n": 300})  # a channel's own message too
            heard_first = [(await listening.receive(first))["n"] for _ in range(301)]
            heard_second = [(await listening.receive(second))["n"] for _ in range(300)]
            return heard_first, heard_second
        finally:
            await listening.flush()
            await sending.flush()

    heard_first, heard_second = async_to_sync(scenario)()
    assert heard_first == list(range(301))
    assert heard_second == list(range(300))


def test_a_subscription_cut_by_redis_is_made_again(live_services):
    listening, sending = new_layer(), new_layer()
    server = redis.Redis.from_url(settings.REDIS_URL)

    async def heard_after(channel: str, first: int) -> int:
        # published until heard: the reader subscribes again some time after the cut.
        # A message published before `first` (a slow first round sent two) is skipped.
        receiving = asyncio.ensure_future(listening.receive(channel))
        for n in range(first, first + 100):
            await sending.group_send(GROUP, {"type": "live.forward", "n": n})
            done, _ = await asyncio.wait({receiving}, timeout=0.1)  # not cancelled: a cancel drops the channel
            while done:
                if (heard := receiving.result()["n"]) >= first:
                    return heard
                receiving = asyncio.ensure_future(listening.receive(channel))
                done, _ = await asyncio.wait({receiving}, timeout=0)
        raise AssertionError("the reader did not subscribe again")

    async def scenario() -> tuple[int, int]:
        channel = await listening.new_channel()
        await listening.group_add(GROUP, channel)
        try:
            before = await heard_after(channel, 0)
            # this layer's subscriber connection only: other labs may share the server
            (shard,) = listening._get_layer()._shards
            host, port = shard._pubsub.connection._writer.get_extra_info("sockname")[:2]
            assert server.client_kill(f"{host}:{port}")
            return before, await heard_after(channel, 1000)
        finally:
            await listening.flush()
            await sending.flush()

    before, after = async_to_sync(scenario)()
    assert before == 0
    assert after >= 1000


def test_a_delivered_channel_gets_each_message_in_order_until_discarded(live_services):
    listening, sending = new_layer(), new_layer()

    async def scenario() -> tuple[list[int], list[int], bool]:
        heard, other_heard = [], []
        all_heard = asyncio.get_running_loop().create_future()

        def deliver(data: bytes) -> None:
            message = listening.deserialize(data)
            heard.append(message["n"])
            if message["n"] == 300:
                all_heard.set_result(None)

        channel = await listening.new_channel_delivered(deliver)
        other = await listening.new_channel()  # a channel read with `receive`, in the same group
        await listening.group_add(GROUP, channel)
        await listening.group_add(GROUP, other)
        try:
            await sending.group_send_many([(GROUP, {"type": "live.forward", "n": n}) for n in range(300)])
            await sending.send(channel, {"type": "live.forward", "n": 300})  # its own message too
            await asyncio.wait_for(all_heard, 10)
            other_heard = [(await listening.receive(other))["n"] for _ in range(300)]
            await listening.channel_discard(channel)
            subscribed = channel in listening._get_layer()._shards[0]._subscribed_to
            await sending.send(channel, {"type": "live.forward", "n": 301})  # no one listens any more
            await sending.group_send(GROUP, {"type": "live.forward", "n": 302})  # the group's other channel does
            assert (await listening.receive(other))["n"] == 302
            return heard, other_heard, subscribed
        finally:
            await listening.flush()
            await sending.flush()

    heard, other_heard, subscribed = async_to_sync(scenario)()
    assert heard == list(range(301))
    assert other_heard == list(range(300))
    assert not subscribed


def test_a_batch_of_group_sends_is_one_bundle_each_process_hands_to_its_own_members(live_services):
    one_process, other_process, sending = new_layer(), new_layer(), new_layer()
    first_group, second_group = f"{GROUP}.first", f"{GROUP}.second"

    async def published(pubsub) -> dict[str, int]:
        # what reached the watcher within half a second (the messages were delivered by then)
        counts: dict[str, int] = {}
        deadline = asyncio.get_running_loop().time() + 0.5
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
            if message is not None:
                counts[message["channel"].decode()] = counts.get(message["channel"].decode(), 0) + 1
        return counts

    async def scenario() -> dict:
        a_first, a_second = await one_process.new_channel(), await one_process.new_channel()
        b_second = await other_process.new_channel()
        await one_process.group_add(first_group, a_first)
        await one_process.group_add(second_group, a_second)
        await other_process.group_add(second_group, b_second)
        layer = one_process._get_layer()
        watcher = aioredis.Redis.from_url(settings.REDIS_URL).pubsub()
        watched = [BUNDLES, *(layer._get_group_channel_name(g) for g in (first_group, second_group))]
        await watcher.subscribe(*watched)
        try:
            await sending.group_send_many(
                [
                    (first_group, {"type": "live.forward", "n": 0}),
                    (second_group, {"type": "live.forward", "n": 1}),
                    (first_group, {"type": "live.forward", "n": 2}),
                    (f"{GROUP}.unwatched", {"type": "live.forward", "n": 3}),
                    (second_group, {"type": "live.forward", "n": 4}),
                ]
            )
            heard = {
                "a_first": [(await one_process.receive(a_first))["n"] for _ in range(2)],
                "a_second": [(await one_process.receive(a_second))["n"] for _ in range(2)],
                "b_second": [(await other_process.receive(b_second))["n"] for _ in range(2)],
                "published": await published(watcher),
            }
            # a channel that left its group hears none of the group's later bundles; the group's others do
            await one_process.group_discard(second_group, a_second)
            await sending.group_send_many(
                [(second_group, {"type": "live.forward", "n": 5}), (first_group, {"type": "live.forward", "n": 6})]
            )
            heard["b_second"].append((await other_process.receive(b_second))["n"])
            heard["a_first"].append((await one_process.receive(a_first))["n"])  # its process read the bundle
            heard["a_second_waiting"] = layer.channels[a_second].qsize()
            heard["published"] = [heard["published"], await published(watcher)]
            return heard
        finally:
            await watcher.aclose()
            for each in (one_process, other_process, sending):
                await each.flush()

    heard = async_to_sync(scenario)()
    assert heard["a_first"] == [0, 2, 6]
    assert heard["a_second"] == [1, 4]
    assert heard["b_second"] == [1, 4, 5]
    assert heard["a_second_waiting"] == 0
    # one PUBLISH a batch, on the bundles' channel; none on the groups' own channels
    assert heard["published"] == [{BUNDLES: 1}, {BUNDLES: 1}]
