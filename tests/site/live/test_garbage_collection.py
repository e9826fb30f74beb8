"""The live server's garbage collection: full passes stall every socket of
the process, so they come rarely under load and when the ingest thread is
idle."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

from loopguard_site.asgi import FULL_PASS_AFTER
from loopguard_site.live.ingest_worker import IDLE_COLLECT_GROWTH, IngestWorker
from tests.shared_paths import REPO_ROOT


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


# What a server process has after loading the application, as
# `daphne loopguard_site.asgi:application` and `loopguard lab` load it: read in
# a fresh interpreter, so nothing this test process did (other tests' imports,
# their collector settings) counts.
SERVER_GC = """
import gc
{load}
print(gc.get_threshold()[2], gc.get_freeze_count())
"""
LOAD_THE_SERVER = "from daphne.utils import import_by_path; import_by_path('loopguard_site.asgi:application')"


def server_gc(load: str) -> tuple[int, int]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "loopguard_site.settings", "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", SERVER_GC.format(load=load)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    threshold, frozen = result.stdout.split()
    return int(threshold), int(frozen)


def test_the_server_makes_full_passes_rarely_and_leaves_what_it_loaded_out_of_them():
    threshold, frozen = server_gc(LOAD_THE_SERVER)
    assert threshold == FULL_PASS_AFTER == 100
    assert frozen > 10_000  # the modules and objects the application loaded
    assert server_gc("") == (10, 0)  # an interpreter that did not load it: CPython's defaults
