"""Replay throughput: sessions and events per second with 1, then 2 Celery
worker processes, on PostgreSQL and Redis.

N real sessions are imported through `session_import_file` (the service
behind the upload page, the API and `loopguard import`) into a dedicated
database (`loopguard_bench_replay`, created and dropped here): the samples of
fixtures/formats as they are, then corpus rows (fixtures/corpus) as
`events` files, each row streamed the way `loopguard eval` replays it
(4-character deltas; tool_calls rows as tool calls). One replay job
(`replay_job_create`) over all of them through the profile is then timed
from creation to its last run finished, first with one worker
(`celery -A loopguard_site worker -c 1`) and then with two; Redis db 12 is
the broker. Workers are stopped on every exit, Ctrl-C included. Each
worker's CPU share is its CPU time (its main process and the pool process
that runs the tasks) over the job's wall time: 100 % is one core. On a
shared machine the share is what the scheduler gave; events per worker
CPU-second (events fed to monitors: events × profiles) is the rate a worker
with a core of its own would approach, were the database as fast.

Two workers can only be twice as fast if the machine has two cores to give
them, so beside the wall-clock scaling the table shows what the cores gave:
*idle* is the share of the machine's CPU nobody used during the job (from
/proc/stat; 0 % means the workers competed with other processes), and *CPU
scaling* is the one-worker job's worker CPU seconds over the busiest of the
two workers' (how much sooner the job would end were each worker given a
core and the database kept up: the split of the work, the fixed costs the
second worker adds, and nothing of the load). *first run* is the time from
the job's creation to its first run starting (the dispatcher and the queue).
With `--repeat N` the one- and two-worker jobs alternate N times, and a
summary gives min, median and mean of each column.

    .venv/bin/python bench/replay_throughput.py            # 200 sessions
    .venv/bin/python bench/replay_throughput.py --quick    # 40 sessions
    .venv/bin/python bench/replay_throughput.py --repeat 3 --profile default --profile seed000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import FORMATS_DIR, add_corpus_argument, corpus_files  # noqa: E402
from bench.lab_processes import bench_lab, cpu_seconds, load_average, processes  # noqa: E402
from detector.evaluation import read_corpus, row_events  # noqa: E402

DATABASE = "loopguard_bench_replay"
REDIS_DB = 12
JOB_TIMEOUT_S = 900  # a replay that takes longer is abandoned (the table says so)


def session_files(count: int, corpus: list[Path] | None = None) -> list[tuple[str, bytes]]:
    """(filename, bytes) of `count` transcripts: the format samples, then corpus rows."""
    files = [
        (str(path.relative_to(FORMATS_DIR)), path.read_bytes())
        for path in sorted(FORMATS_DIR.rglob("*"))
        if path.is_file() and path.name != "SOURCES.md"
    ]
    rows = [row for path in corpus_files(corpus) for row in read_corpus(path)]
    # Interleave the corpus files' rows so a small N still mixes loops, normals and tool calls.
    rows.sort(key=lambda row: (row.line, row.source))
    for row in rows[: max(0, count - len(files))]:
        lines = "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in row_events(row))
        files.append((f"{row.id}.jsonl", lines.encode()))
    return files[:count]


def import_sessions(files: list[tuple[str, bytes]]) -> tuple[list[int], int]:
    from loopguard_site.transcripts.services import session_import_file

    ids, events = [], 0
    for name, data in files:
        session = session_import_file(data=data, filename=name)
        ids.append(session.pk)
        events += session.event_count
    return ids, events


def wait_for_workers(app, count: int, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=1.0) or []) >= count:
            return
    raise SystemExit(f"{count} Celery worker(s) did not answer within {deadline_s:.0f} s")


def worker_cpu_seconds(pid: int) -> float:
    """CPU seconds of a worker: its process, and its pool processes (alive or reaped)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return cpu_seconds(pid) + sum(cpu_seconds(int(child)) for child in children)


def machine_cpu() -> tuple[int, int]:
    """(idle, total) jiffies of every core since boot, from /proc/stat."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return values[3] + values[4], sum(values)  # idle + iowait


def timed_job(session_ids: list[int], profiles: list[str]) -> tuple[float, float, str]:
    """Seconds from the job's creation to its end, seconds to its first run's
    start, and how it ended."""
    from django.db.models import Min

    from loopguard_site.replay.models import ReplayJob
    from loopguard_site.replay.services import replay_job_create

    start = time.perf_counter()
    job = replay_job_create(user=None, profiles=profiles, session_ids=session_ids)
    finished = (ReplayJob.State.DONE, ReplayJob.State.FAILED, ReplayJob.State.CANCELLED)
    while time.perf_counter() - start < JOB_TIMEOUT_S:
        job.refresh_from_db()
        if job.state in finished:
            seconds = time.perf_counter() - start
            first = job.runs.aggregate(first=Min("started"))["first"]
            return (
                seconds,
                (first - job.created).total_seconds(),
                f"{job.state} ({job.done}/{job.total} runs, {job.failed} failed)",
            )
        time.sleep(0.05)
    return time.perf_counter() - start, float("nan"), f"timed out ({job.done}/{job.total} runs)"


@dataclass(frozen=True)
class Measure:
    """One timed job: its seconds, each worker's CPU seconds, the machine's idle share."""

    workers: int
    seconds: float
    first_run: float
    used: list[float]
    idle: float
    outcome: str


def row(measure: Measure, alone: Measure, fed: int, runs: int) -> str:
    seconds, used = measure.seconds, measure.used
    cpu_scaling = f"{sum(alone.used) / max(used):.2f}×" if measure.workers > 1 else "1.00×"
    return (
        f"| {measure.workers} | {seconds:.1f} | {runs / seconds:.2f} | {fed / seconds:,.0f}"
        f" | {alone.seconds / seconds:.2f}× | {', '.join(f'{cpu / seconds:.0%}' for cpu in used)}"
        f" | {fed / sum(used):,.0f} | {cpu_scaling} | {measure.idle:.0%} | {measure.first_run:.2f}"
        f" | {measure.outcome} | {load_average()[13:]} |"
    )


def spread(values: list[float], form: str) -> str:
    """min / median / mean of `values`, each formatted with `form`."""
    return " / ".join(format(v, form) for v in (min(values), statistics.median(values), statistics.mean(values)))


def summary(pairs: list[tuple[Measure, Measure]], fed: int) -> list[str]:
    """The table of min / median / mean over the repeats."""
    lines = [
        "| workers | seconds | events/s | scaling | events/worker CPU-s | CPU scaling | idle |",
        "|---|---|---|---|---|---|---|",
    ]
    for index in (0, 1):
        measures = [pair[index] for pair in pairs]
        scaling = [pair[0].seconds / pair[index].seconds for pair in pairs]
        cpu_scaling = [sum(pair[0].used) / max(pair[index].used) for pair in pairs]
        lines.append(
            f"| {index + 1} | {spread([m.seconds for m in measures], '.1f')}"
            f" | {spread([fed / m.seconds for m in measures], ',.0f')} | {spread(scaling, '.2f')}"
            f" | {spread([fed / sum(m.used) for m in measures], ',.0f')} | {spread(cpu_scaling, '.2f')}"
            f" | {spread([m.idle * 100 for m in measures], '.0f')} % |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 sessions instead of 200")
    parser.add_argument("--sessions", type=int, default=None, help="number of sessions (default 200, --quick 40)")
    parser.add_argument("--profile", action="append", default=None, help="profile to replay through (default: default)")
    parser.add_argument("--database", default=DATABASE, help=f"database to create and drop (default {DATABASE})")
    parser.add_argument("--redis-db", type=int, default=REDIS_DB, help=f"Redis db number (default {REDIS_DB})")
    parser.add_argument("--repeat", type=int, default=1, help="one- then two-worker jobs, this many times")
    add_corpus_argument(parser)
    args = parser.parse_args(argv)
    count = args.sessions or (40 if args.quick else 200)
    profiles = args.profile or ["default"]
    files = session_files(count, args.corpus)
    logs = Path(tempfile.mkdtemp(prefix="loopguard-bench-replay-"))
    with bench_lab(args.database, args.redis_db) as env, processes() as workers:
        from loopguard_site.celery import app

        start = time.perf_counter()
        session_ids, events = import_sessions(files)
        print(
            f"imported {len(session_ids)} sessions, {events:,} events, {sum(len(d) for _, d in files) / 1e6:.1f} MB"
            f" in {time.perf_counter() - start:.1f} s; profiles: {', '.join(profiles)}; {load_average()}"
        )
        print(
            "| workers | seconds | runs/s | events/s | scaling | worker CPU | events/worker CPU-s | CPU scaling"
            " | idle | first run s | job | load average after |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        runs, fed = len(session_ids) * len(profiles), events * len(profiles)
        pairs = []
        for _ in range(args.repeat):
            pair = []
            for count_workers in (1, 2):
                while len(workers.running) > count_workers:
                    workers.stop(workers.running[-1])
                while len(workers.running) < count_workers:
                    number = len(workers.running) + 1
                    command = [sys.executable, "-m", "celery", "-A", "loopguard_site", "worker", "-c", "1"]
                    command += ["-n", f"bench{number}@%h", "-l", "WARNING", "--without-gossip", "--without-mingle"]
                    workers.start(command, env, logs / f"worker{number}.log")
                wait_for_workers(app, count_workers)
                cpu_before = [worker_cpu_seconds(worker.pid) for worker in workers.running]
                machine_before = machine_cpu()
                seconds, first_run, outcome = timed_job(session_ids, profiles)
                machine_after = machine_cpu()
                used = [
                    worker_cpu_seconds(w.pid) - before for w, before in zip(workers.running, cpu_before, strict=True)
                ]
                idle = (machine_after[0] - machine_before[0]) / (machine_after[1] - machine_before[1])
                pair.append(Measure(count_workers, seconds, first_run, used, idle, outcome))
                print(row(pair[-1], pair[0], fed, runs), flush=True)
            pairs.append(pair)
        if args.repeat > 1:
            print(f"\nmin / median / mean over {args.repeat} repeats")
            print("\n".join(summary(pairs, fed)))
    print(f"worker logs: {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
