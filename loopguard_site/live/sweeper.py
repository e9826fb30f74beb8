"""The live sessions' clock: a daemon thread of the lab process that calls
`live_sessions_mark_stalled(now)` and `live_sessions_tick(now)` every
LOOPGUARD_LIVE_SWEEP_SECONDS, and `replay_jobs_requeue_stale(now)` and
`tuning_jobs_requeue_stale(now)` (jobs whose tasks a broker lost, or whose
worker died).

It runs in every `loopguard lab` process, embedded or full mode: no beat
process to deploy, and several web processes sweeping at once are harmless
(each session is re-checked under its row lock). The loop's body is the
service; tests call the service with a frozen clock.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections
from django.utils import timezone

from loopguard_site.profiles.services import tuning_jobs_requeue_stale
from loopguard_site.replay.services import replay_jobs_requeue_stale

from .services import live_sessions_mark_stalled, live_sessions_tick

log = logging.getLogger(__name__)


class StalledSweeper:
    def __init__(self, interval: float):
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-stalled-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.interval + 30)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                now = timezone.now()
                live_sessions_mark_stalled(now=now)
                live_sessions_tick(now=now)
                replay_jobs_requeue_stale(now=now)
                tuning_jobs_requeue_stale(now=now)
            except Exception:  # a database hiccup must not end the sweeping for good
                log.exception("the live sweep failed; trying again in %s s", self.interval)
            finally:
                close_old_connections()
