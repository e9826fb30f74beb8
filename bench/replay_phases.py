"""Where a replay worker's time goes: the task body of bench/replay_throughput.py
(`replay_job_sessions_execute` over the job's chunks) run in this process,
without Celery, on PostgreSQL, its CPU and wall seconds split by phase.

The same 200 sessions are imported into a dedicated database
(`loopguard_bench_phases`, created and dropped here), then one job through
the profiles is created (its tasks not sent) and its chunks executed here,
`--repeat` times; the phases are measured by wrapping the services' own
functions, and the Monitors alone are timed on the events already decoded:

- claims: `_session_runs_claim` (one UPDATE per session, as the task reaches it);
- read: the rows of the chunk's sessions fetched (`sessions_event_streams`'
  queries), with the chunk's other reads (its sessions, its runs, the profiles);
- decode: the sessions' JSON texts decoded as `sessions_event_streams` decodes them
  (one `json.loads` of a session's texts, aggregated by PostgreSQL as one array; timed alone);
- monitors: `Monitor.feed` of every event through every profile (timed alone,
  on the events decoded);
- replay loop: the rest of `_profile_replays` (building monitors, collecting what they found);
- store: `_chunk_store` (the chunk's results, its runs finished and counted);
- progress: `_progress` and `_job_started`.

Read is the task's total less everything else. Below the phases, where the
task's wall time goes: the CPU of the thread that runs it, of the process's
other threads (none, unless a library starts one), and *caller waiting*,
the wall time the task spent off the CPU (waiting for PostgreSQL's answers,
or for a core on a loaded machine). Best and mean of the repeats.

    .venv/bin/python bench/replay_phases.py
    .venv/bin/python bench/replay_phases.py --profile default --profile seed000 --profile gemini --profile preview
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import add_corpus_argument  # noqa: E402
from bench.lab_processes import bench_lab, load_average  # noqa: E402
from bench.replay_throughput import import_sessions, session_files  # noqa: E402

DATABASE = "loopguard_bench_phases"
REDIS_DB = 14  # none of the other benchmarks uses it
WRAPPED = {"claims": ["_session_runs_claim"], "store": ["_chunk_store"], "progress": ["_progress", "_job_started"]}


class Clock:
    """CPU and wall seconds spent inside the wrapped functions, by phase."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}

    def wrap(self, phase: str, function: Callable) -> Callable:
        def timed(*args, **kwargs):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[phase] = self.cpu.get(phase, 0.0) + time.process_time() - cpu
                self.wall[phase] = self.wall.get(phase, 0.0) + time.perf_counter() - wall

        return timed


def job_run(session_ids: list[int], profiles: list[str], clock: Clock) -> tuple[float, float, float]:
    """Create a job and execute its chunks here; seconds of the chunks: the
    process's CPU, this thread's CPU and the wall clock's."""
    from loopguard_site.replay import services
    from loopguard_site.replay.selectors import job_queued_sessions

    with mock.patch.object(services, "_dispatch"):
        job = services.replay_job_create(user=None, profiles=profiles, session_ids=session_ids)
    chunks = list(
        services.task_chunks(
            job_queued_sessions(job_id=job.pk, after_session_id=0, limit=len(session_ids)), profiles=len(profiles)
        )
    )
    patches = [
        mock.patch.object(services, name, clock.wrap(phase, getattr(services, name)))
        for phase, names in WRAPPED.items()
        for name in names
    ]
    patches.append(mock.patch.object(services, "_profile_replays", clock.wrap("replay", services._profile_replays)))
    for patch in patches:
        patch.start()
    try:
        cpu, thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
        for chunk in chunks:
            services.replay_job_sessions_execute(job_id=job.pk, session_ids=chunk, claim="bench")
        return time.process_time() - cpu, time.thread_time() - thread, time.perf_counter() - wall
    finally:
        for patch in patches:
            patch.stop()


def decode_and_monitors_alone(session_ids: list[int], profiles: list[str]) -> tuple[float, float]:
    """CPU seconds of decoding every stored event (as `_session_events` does:
    a session's JSON texts joined by PostgreSQL) and of the Monitors fed
    them, each alone."""
    from django.db import connection

    from loopguard_site.replay.monitors import profile_monitor
    from loopguard_site.replay.selectors import replay_config
    from loopguard_site.transcripts.models import Event, Session

    sessions = Session.objects.in_bulk(session_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT session_id, string_agg(CAST(data AS TEXT), ',' ORDER BY seq) FROM {Event._meta.db_table}"
            " WHERE session_id = ANY(%s) GROUP BY session_id",
            [session_ids],
        )
        texts = cursor.fetchall()
    cpu = time.process_time()
    decoded = {session_id: json.loads(f"[{session_texts}]") for session_id, session_texts in texts}
    decode = time.process_time() - cpu
    config = replay_config(None)
    cpu = time.process_time()
    for profile in profiles:
        for session_id, events in decoded.items():
            feed = profile_monitor(config.select(profile), model=sessions[session_id].model).feed
            for event in events:
                feed(event)
    return decode, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200, help="number of sessions (default 200)")
    parser.add_argument("--profile", action="append", default=None, help="profile to replay through (default: default)")
    parser.add_argument("--repeat", type=int, default=3, help="jobs to run (default 3)")
    parser.add_argument("--database", default=DATABASE, help=f"database to create and drop (default {DATABASE})")
    parser.add_argument("--redis-db", type=int, default=REDIS_DB, help=f"Redis db number (default {REDIS_DB})")
    add_corpus_argument(parser)
    args = parser.parse_args(argv)
    profiles = args.profile or ["default"]
    with bench_lab(args.database, args.redis_db):
        session_ids, events = import_sessions(session_files(args.sessions, args.corpus))
        fed = events * len(profiles)
        print(f"{len(session_ids)} sessions, {events:,} events; profiles: {', '.join(profiles)}; {load_average()}")
        measured, spent = [], []
        for _ in range(args.repeat):
            clock = Clock()
            cpu, thread, wall = job_run(session_ids, profiles, clock)
            decode, monitors = decode_and_monitors_alone(session_ids, profiles)
            phases = {
                "claims": clock.cpu.get("claims", 0.0),
                "decode": decode,
                "monitors": monitors,
                "replay loop": clock.cpu["replay"] - decode - monitors,
                "store": clock.cpu.get("store", 0.0),
                "progress": clock.cpu.get("progress", 0.0),
            }
            phases["read"] = cpu - sum(phases.values())
            walls = {phase: clock.wall.get(phase, 0.0) for phase in ("claims", "store", "progress")}
            measured.append((cpu, wall, phases, walls))
            spent.append(
                {"task's thread CPU": thread, "other threads' CPU": cpu - thread, "caller waiting": wall - cpu}
            )
        print(
            "| phase | CPU s (best, mean) | share of CPU | µs per event fed (best) | wall s (best, mean) |\n"
            "|---|---|---|---|---|"
        )
        best_cpu = min(cpu for cpu, *_ in measured)
        mean_cpu = statistics.mean(cpu for cpu, *_ in measured)
        for phase in ("read", "decode", "monitors", "replay loop", "claims", "store", "progress"):
            cpus = [phases[phase] for _, _, phases, _ in measured]
            walls = [w[phase] for *_, w in measured] if phase in measured[0][3] else None
            wall = f"{min(walls):.3f}, {statistics.mean(walls):.3f}" if walls else ""
            print(
                f"| {phase} | {min(cpus):.3f}, {statistics.mean(cpus):.3f} | {statistics.mean(cpus) / mean_cpu:.0%}"
                f" | {min(cpus) / fed * 1e6:.2f} | {wall} |"
            )
        walls = [wall for _, wall, *_ in measured]
        print(
            f"| task body | {best_cpu:.3f}, {mean_cpu:.3f} | 100% | {best_cpu / fed * 1e6:.2f}"
            f" | {min(walls):.3f}, {statistics.mean(walls):.3f} |"
        )
        print("\n| where the task's wall time went | s (best, mean) | share of wall (mean) |\n|---|---|---|")
        for part in spent[0]:
            seconds = [parts[part] for parts in spent]
            print(
                f"| {part} | {min(seconds):.3f}, {statistics.mean(seconds):.3f}"
                f" | {statistics.mean(seconds) / statistics.mean(walls):.0%} |"
            )
        print(
            f"events fed per CPU-second (best): {fed / best_cpu:,.0f}; per wall second (best): {fed / min(walls):,.0f}"
        )
        print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
