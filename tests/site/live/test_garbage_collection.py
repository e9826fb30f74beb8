"""The live server's garbage collection: full passes stall every socket of
the process, so they come rarely under load and when the ingest thread is
idle."""

from __future__ import annotations

import gc
import weakref

from loopguard_site.asgi import FULL_PASS_AFTER
from loopguard_site.live.ingest_worker import IDLE_COLLECT_GROWTH, IngestWorker


class _Node:
    pass


def test_an_idle_ingest_thread_collects_only_once_long_lived_objects_grew():
    worker = IngestWorker()
    gc.disable()  # no automatic pass in between
    try:
        base = [[] for _ in range(1000)]
        gc.collect(generation=1)  # into the oldest generation
        assert worker.collect_if_grown()  # none made yet
        assert not worker.collect_if_grown()  # nothing grew since

        cycle = _Node()
        cycle.next = cycle
        collected = weakref.ref(cycle)
        gc.collect(generation=1)  # still reachable: moved to the oldest generation
        del cycle  # now garbage that only a full pass finds
        assert not worker.collect_if_grown()
        assert collected() is not None

        long_lived = len(gc.get_objects(generation=2))
        kept = [[] for _ in range(int(long_lived * 2 * IDLE_COLLECT_GROWTH))]
        gc.collect(generation=1)
        assert worker.collect_if_grown()
        assert collected() is None
        assert base and kept
    finally:
        gc.enable()


def test_the_server_makes_full_passes_rarely_and_leaves_what_it_loaded_out_of_them():
    assert gc.get_threshold()[2] == FULL_PASS_AFTER > 10
    assert gc.get_freeze_count() > 0
