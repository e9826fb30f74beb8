"""Two labs on one Redis server, on different database numbers, do not hear
each other's groups. Redis keeps keys per database but not pub/sub: before
the layer's names carried the database, a lab's producer socket of session
39 was closed with 4409 by another lab's takeover announcement for its own
session 39 (the connect storm of BENCHMARKS.md section 8, run while other
suites used the same server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from asgiref.sync import async_to_sync
from django.conf import settings
from django.utils.module_loading import import_string
from redis.connection import parse_url

from tests.conftest import REPO_ROOT

GROUP = "live.producer.39"


def layer_of_lab(redis_url: str):
    """The channel layer a lab configured with `redis_url` builds (its settings, read in a fresh interpreter)."""
    show = "import json; from loopguard_site import settings as s; print(json.dumps(s.CHANNEL_LAYERS['default']))"
    environ = {**os.environ, "REDIS_URL": redis_url}
    result = subprocess.run([sys.executable, "-c", show], cwd=REPO_ROOT, env=environ, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    return import_string(config["BACKEND"])(**config["CONFIG"])


def test_a_lab_does_not_hear_the_groups_of_a_lab_on_another_database_of_its_redis(live_services):
    ours = settings.REDIS_URL
    database = parse_url(ours).get("db", 0)
    elsewhere = ours.rsplit("/", 1)[0] + f"/{(database + 1) % 16}"
    listening, same_database, other_database = layer_of_lab(ours), layer_of_lab(ours), layer_of_lab(elsewhere)

    async def scenario() -> list[dict]:
        channel = await listening.new_channel()
        await listening.group_add(GROUP, channel)
        try:
            # heard once the subscription is in place: what follows is not a race with it
            await same_database.group_send(GROUP, {"type": "producer.taken", "n": 1})
            heard = [await listening.receive(channel)]
            await other_database.group_send(GROUP, {"type": "producer.taken", "n": 2})
            await same_database.group_send(GROUP, {"type": "producer.taken", "n": 3})
            heard.append(await listening.receive(channel))
            return heard
        finally:
            for layer in (listening, same_database, other_database):
                await layer.flush()

    assert async_to_sync(scenario)() == [{"type": "producer.taken", "n": 1}, {"type": "producer.taken", "n": 3}]
