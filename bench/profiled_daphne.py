"""Daphne with cProfile (CPU time) on its main thread (the event loop: framing,
channels' dispatch, the consumers, the channel layer; not the ingest
thread, which `live_load.py --profile-ingest` profiles):

    python bench/profiled_daphne.py OUT.prof [daphne arguments]

The profile is written to OUT.prof when Daphne stops (SIGTERM or SIGINT)."""

import cProfile
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daphne.cli import CommandLineInterface  # noqa: E402

profiler = cProfile.Profile(time.thread_time)  # CPU time: robust to a loaded machine
profiler.enable()
try:
    CommandLineInterface().run(sys.argv[2:])
finally:
    profiler.disable()
    profiler.dump_stats(sys.argv[1])
