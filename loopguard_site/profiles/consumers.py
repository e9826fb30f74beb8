"""`/ws/tuning/<id>`: a tuning job's progress, live. Authenticates, sends
the job's counters once, then forwards every progress message of its group."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .messages import tuning_group, tuning_job_progress
from .selectors import tuning_job_get


class TuningJobConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        if not self.scope["user"].is_authenticated:
            await self.close(code=4401)
            return
        job_id = self.scope["url_route"]["kwargs"]["job_id"]
        self.group = tuning_group(job_id)
        # Join first, then read the snapshot: no progress can fall between them.
        await self.channel_layer.group_add(self.group, self.channel_name)
        job = await database_sync_to_async(tuning_job_get)(job_id)
        if job is None:
            await self.close(code=4404)
            return
        await self.accept()
        await self.send_json(tuning_job_progress(job))

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def tuning_progress(self, message: dict) -> None:
        await self.send_json(message["progress"])
