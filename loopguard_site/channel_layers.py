"""The embedded mode's channel layer: channels' in-memory layer, made safe
for senders on other threads.

The in-memory layer keeps one `asyncio.Queue` per channel, bound to the
event loop of the consumer that awaits it (Daphne's). The embedded Celery
worker sends from its own threads through `async_to_sync`, that is from
another event loop, and asyncio is not thread-safe: the put would not wake
the waiting consumer, and the message would sit until something else woke
Daphne's loop. Such a send is handed over to the receiving loop instead.
"""

from __future__ import annotations

import asyncio

from channels.layers import InMemoryChannelLayer


class ThreadSafeInMemoryChannelLayer(InMemoryChannelLayer):
    async def send(self, channel: str, message: dict) -> None:
        queue = self.channels.get(channel)
        owner = getattr(queue, "_loop", None)  # asyncio binds a queue to a loop once someone awaits it
        if owner is None or owner is asyncio.get_running_loop() or not owner.is_running():
            await super().send(channel, message)
            return
        handover = asyncio.run_coroutine_threadsafe(super().send(channel, message), owner)
        await asyncio.wrap_future(handover)
