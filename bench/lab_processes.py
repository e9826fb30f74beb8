"""What the lab benchmarks share: a dedicated PostgreSQL database and Redis
db number, Django set up on them, server or worker subprocesses that are
stopped on every exit (normal end, an error, Ctrl-C or SIGTERM), and a
watcher of the lab processes' PostgreSQL connections (tests use it too).

The database is created by `bench_lab` and dropped when it exits; the Redis
db is flushed before and after (only that db number).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = "postgres://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"
HOST = "127.0.0.1"  # servers listen here only


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def bench_lab(database: str, redis_db: int) -> Iterator[dict[str, str]]:
    """A fresh database `database` and Redis db `redis_db`, Django set up on
    them (migrated); yields the environment for subprocesses."""
    env = {
        "DATABASE_URL": f"{POSTGRES}/{database}",
        "REDIS_URL": f"{REDIS}/{redis_db}",
        "DJANGO_SETTINGS_MODULE": "loopguard_site.settings",
        # as deployed: no debug bookkeeping (query log, debug pages)
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(32),
    }
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored (`cmd &`)
    _admin(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{database}"')
    _flush_redis(env["REDIS_URL"])
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        yield {**os.environ, **env}
    finally:
        from django.db import connections

        connections.close_all()
        _admin(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        _flush_redis(env["REDIS_URL"])


class Processes:
    """Subprocesses, each in its own process group, all stopped by `stop_all`."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen] = []

    def start(self, command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
        with open(log, "wb") as out:
            process = subprocess.Popen(
                command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.running.append(process)
        return process

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.running.remove(process)

    def stop_all(self) -> None:
        for process in list(self.running):
            self.stop(process)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_listening(process: subprocess.Popen, port: int, log: Path, deadline_s: float = 60) -> None:
    """Return once `process` listens on HOST:`port`; SystemExit if it exits or takes too long."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} exited with status {process.returncode} (log: {log})")
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"nothing listened on {HOST}:{port} within {deadline_s:.0f} s (log: {log})")


def start_daphne(
    group: Processes, env: dict[str, str], log: Path, deadline_s: float = 60, profile: Path | None = None
) -> tuple:
    """Daphne serving the lab on a free port of HOST, once it listens:
    (process, port). With `profile`, its main thread is profiled into that
    file (written once it is stopped: `profiled_daphne.py`)."""
    port = free_port()
    run = (
        [sys.executable, "-m", "daphne"]
        if profile is None
        else [sys.executable, str(ROOT / "bench" / "profiled_daphne.py"), str(profile)]
    )
    # Daphne drops a socket its application has not accepted within 5 s; on a loaded machine a
    # ramp's handshakes (each authenticating against the database) queue longer than that.
    command = [
        *run,
        "-b",
        HOST,
        "-p",
        str(port),
        "--websocket_connect_timeout",
        "120",
        "loopguard_site.asgi:application",
    ]
    server = group.start(command, env, log)
    wait_listening(server, port, log, deadline_s)
    return server, port


@contextlib.contextmanager
def processes() -> Iterator[Processes]:
    group = Processes()
    try:
        yield group
    finally:
        group.stop_all()


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU seconds of a process and its reaped children, from
    /proc; with `thread`, of that thread of it (the main thread's id is the
    process's)."""
    stat = Path(f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def process_ids(command_name: str) -> list[int]:
    """The ids of the processes whose command (/proc/PID/comm) is `command_name`."""
    ids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == command_name:
                ids.append(int(comm.parent.name))
        except OSError:  # ended meanwhile
            continue
    return ids


class BackendCpu:
    """CPU seconds the PostgreSQL backends serving `database` used from
    `start` (the constructor) to `stop`: their ids polled every `every`
    seconds from pg_stat_activity (the watcher's own excluded), each one's
    CPU from /proc at its first and last sight; a backend first seen after
    the start counts from 0. A connection that opens and closes between two
    polls is missed (the live ingest threads keep theirs while busy)."""

    def __init__(self, database_url: str, database: str, every: float = 0.5):
        self.url, self.database, self.every = database_url, database, every
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = threading.Event()
        self._thread.start()
        self._started.wait()

    def _poll(self, watcher, at_start: bool) -> None:
        for (pid,) in watcher.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (self.database,)
        ):
            try:
                seconds = cpu_seconds(pid)
            except OSError:  # ended meanwhile
                continue
            self._first.setdefault(pid, seconds if at_start else 0.0)
            self._last[pid] = seconds

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as watcher:
            self._poll(watcher, at_start=True)
            self._started.set()
            while not self._stop.wait(self.every):
                self._poll(watcher, at_start=False)
            self._poll(watcher, at_start=False)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self._last[pid] - self._first[pid] for pid in self._last)


def load_average() -> str:
    return "load average " + ", ".join(f"{value:.2f}" for value in os.getloadavg())


class ConnectionPeak:
    """The most connections PostgreSQL shows at once for each of `names`
    (application_name: a lab started with `DATABASE_URL=...?application_name=NAME`),
    sampled every 10 ms from `start` (the constructor) to `stop`."""

    def __init__(self, database_url: str, names: list[str]):
        self.url, self.names = database_url, names
        self.peak = dict.fromkeys(names, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as watcher:
            while not self._stop.is_set():
                for name, count in watcher.execute(
                    "SELECT application_name, count(*) FROM pg_stat_activity WHERE application_name = ANY(%s)"
                    " GROUP BY application_name",
                    (self.names,),
                ):
                    self.peak[name] = max(self.peak[name], count)
                time.sleep(0.01)

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        return self.peak
