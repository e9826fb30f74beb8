"""Faults against real processes (full mode: `loopguard lab` processes, a
Celery worker, PostgreSQL, Redis), one table: per scenario the messages (or
replay runs) acknowledged, stored, stored twice, lost, and the seconds it
took to recover.

Scenarios:
- deep message: 20 producers stream through one lab while a reviewer of
  another project sends messages nested 600 levels deep; recovery: none needed.
- connect storm: 300 producers (`LiveSession`, reconnects with jitter)
  start within 1.5 s against two lab processes, each capped at
  LOOPGUARD_DB_CONNECTIONS; recovery: the last producer's last ack after
  the first start. The peak of each lab's connections is printed below.
- worker SIGKILL: a replay job; its worker is killed with SIGKILL a third
  of the way through, while a session replays, and started again; recovery:
  kill to job done (LOOPGUARD_JOB_VISIBILITY_SECONDS=5 here; the lab's
  LOOPGUARD_JOB_STALE_SECONDS=60, for a task lost outright).
- broker restart: a replay job on a throwaway redis-server without
  persistence (another port: never the shared one), restarted empty a
  third of the way through; recovery: restart to job done (the lab's sweep,
  LOOPGUARD_JOB_STALE_SECONDS=10 here).
- anonymous 200 MB POST: a line below the table: what the lab's memory and
  its login page did meanwhile.

    .venv/bin/python bench/faults.py            # all of it (a few minutes)
    .venv/bin/python bench/faults.py --quick    # 60 producers, smaller jobs

Uses a database of its own (`loopguard_bench_faults`, created and dropped)
and Redis db 13 (flushed before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lab_processes import (  # noqa: E402
    HOST,
    ConnectionPeak,
    bench_lab,
    free_port,
    load_average,
    processes,
    wait_listening,
)

LOOPGUARD = Path(sys.executable).with_name("loopguard")
SCENARIOS = ["deep", "storm", "kill", "broker", "body"]
SCENARIOS = ["deep", "storm", "kill", "broker", "body"]


def start_lab(group, env: dict, logs: Path, name: str, **extra: str) -> str:
    port = free_port()
    log = logs / f"{name}.log"
    process = group.start([str(LOOPGUARD), "lab", "--host", HOST, "--port", str(port)], {**env, **extra}, log)
    wait_listening(process, port, log, 120)
    return f"http://{HOST}:{port}"


def start_worker(group, env: dict, logs: Path, name: str, **extra: str):
    command = [sys.executable, "-m", "celery", "-A", "loopguard_site", "worker", "--pool", "solo",
               "--without-heartbeat", "--without-mingle", "--without-gossip", "--loglevel", "INFO"]  # fmt: skip
    return group.start(command, {**env, **extra}, logs / f"{name}.log")


def account(name: str, project=None) -> tuple[object, str]:
    from django.contrib.auth import get_user_model

    from loopguard_site.accounts.models import Role
    from loopguard_site.accounts.services import api_token_create, default_project, membership_set

    project = project or default_project()
    user = get_user_model().objects.create_user(username=name, password=None)
    membership_set(user=user, project=project, role=Role.ADMIN)
    return user, api_token_create(user=user, project=project, name=name)[1]


def live_sessions(user, count: int, project=None) -> list[int]:
    from loopguard_site.transcripts.services import session_create_live

    return [session_create_live(model="bench", uploader=user, project=project).pk for _ in range(count)]


def ingest_counts(session_ids: list[int], sent: dict[int, int]) -> tuple[int, int, int]:
    """(stored, stored twice, lost) of producers' texts `"<session> <n>"`:
    lost counts the acknowledged ones (n in 1..sent[session]) not stored."""
    from django.db.models import Count

    from loopguard_site.transcripts.models import Event

    rows = (
        Event.objects.filter(session_id__in=session_ids).values("session_id", "data__text").annotate(copies=Count("id"))
    )
    stored = sum(row["copies"] for row in rows)
    twice = sum(row["copies"] - 1 for row in rows)
    unique = {(row["session_id"], row["data__text"]) for row in rows}
    lost = sum(1 for sid, count in sent.items() for n in range(1, count + 1) if (sid, f"{sid} {n}") not in unique)
    return stored, twice, lost


def produce(url: str, token: str, session_id: int, messages: int, acked: dict, errors: list, retries: int) -> None:
    from detector.live_client import LiveSession

    live = None
    try:
        # linger=0: each event its own message (the client batches by default),
        # so that acknowledged messages and stored events count the same things
        live = LiveSession(url, token, session_id=session_id, window=8, retries=retries, linger=0)
        for n in range(1, messages + 1):
            live.send({"type": "content", "text": f"{session_id} {n}"})
        live.flush()
        live.disconnect()
    except Exception as exc:  # noqa: BLE001 - counted, reported
        errors.append(f"{type(exc).__name__}: {exc}")
    acked[session_id] = live.acked if live is not None else 0


def deep_message(group, env, logs, messages: int) -> dict:
    from loopguard_site.accounts.models import Project

    url = start_lab(group, env, logs, "lab-deep")
    user, token = account("deep-producers")
    other = Project.objects.create(name="other")
    stranger, stranger_token = account("deep-stranger", project=other)
    sessions = live_sessions(user, 20)
    target = live_sessions(stranger, 1, project=other)[0]
    args = {"seq": 1, "event": {"type": "tool_call", "name": "x", "args": {}}}
    nested: dict = {}
    for _ in range(600):
        nested = {"a": nested}
    args["event"]["args"] = nested
    deep = json.dumps(args)

    def attack() -> None:
        from websockets.sync.client import connect

        ws_url = url.replace("http://", "ws://") + f"/ws/ingest/{target}"
        with connect(ws_url, additional_headers={"Authorization": f"Bearer {stranger_token}"}) as socket_:
            socket_.recv(timeout=10)
            for _ in range(10):
                socket_.send(deep)
                socket_.recv(timeout=10)
                time.sleep(0.05)

    acked: dict[int, int] = {}
    errors: list[str] = []
    threads = [threading.Thread(target=attack)]
    threads += [threading.Thread(target=produce, args=(url, token, s, messages, acked, errors, 8)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored, twice, lost = ingest_counts(sessions, acked)
    return {"scenario": "deep message among 20 producers", "acked": sum(acked.values()), "stored": stored,
            "twice": twice, "lost": lost, "recovery": None, "errors": errors}  # fmt: skip


def connect_storm(group, env, logs, producers: int, messages: int, retries: int) -> dict:
    base = env["DATABASE_URL"]
    names = ["faults-lab-1", "faults-lab-2"]
    urls = [
        start_lab(group, env, logs, name, DATABASE_URL=f"{base}?application_name={name}", LOOPGUARD_DB_CONNECTIONS="20")
        for name in names
    ]
    user, token = account("storm")
    sessions = live_sessions(user, producers)
    acked: dict[int, int] = {}
    errors: list[str] = []
    peak = ConnectionPeak(base, names)
    threads = [
        threading.Thread(target=produce, args=(urls[n % 2], token, s, messages, acked, errors, retries))
        for n, s in enumerate(sessions)
    ]
    started = time.monotonic()
    for n, thread in enumerate(threads):  # all started within 1.5 s
        time.sleep(max(0.0, started + 1.5 * n / len(threads) - time.monotonic()))
        thread.start()
    for thread in threads:
        thread.join()
    recovery = time.monotonic() - started
    peaks = peak.stop()
    stored, twice, lost = ingest_counts(sessions, acked)
    return {"scenario": f"{producers} producers in 1.5 s, 2 labs, {retries} tries", "acked": sum(acked.values()),
            "stored": stored, "twice": twice, "lost": lost, "recovery": recovery, "errors": errors,
            "peaks": peaks}  # fmt: skip


def replay_job(url: str, token: str, session_ids: list[int]) -> int:
    body = json.dumps({"profiles": ["default"], "sessions": session_ids}).encode()
    request = urllib.request.Request(
        f"{url}/api/replays",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())["id"]


def long_sessions(count: int, events: int) -> list[int]:
    from loopguard_site.transcripts.services import session_create_from_events

    text = [{"type": "content", "text": f"Line {n}: the answer goes on, and on, and on. "} for n in range(events)]
    looping = [*text, *({"type": "content", "text": "Again the same sentence. "} for _ in range(200))]
    return [
        session_create_from_events(title=f"long {n}", model="", source_format="events", parser_version="1",
                                   events=looping).pk
        for n in range(count)
    ]  # fmt: skip


def job_counts(job_id: int) -> tuple[int, int, int, int]:
    """(runs counted done, runs with results, detections stored twice, runs not done)."""
    from django.db.models import Count

    from loopguard_site.replay.models import Detection, ReplayJob, ReplayRun

    job = ReplayJob.objects.get(pk=job_id)
    runs = ReplayRun.objects.filter(job=job)
    done = runs.filter(state="done")
    sessions = list(runs.values_list("session_id", flat=True))
    twice = sum(
        row["copies"] - 1
        for row in Detection.objects.filter(session_id__in=sessions, profile="default")
        .values("session_id", "event_seq", "detector", "start", "end")
        .annotate(copies=Count("id"))
        if row["copies"] > 1
    )
    return job.done, done.count(), twice, job.total - job.done


def wait_job(job_id: int, at_least: int | None = None, seconds: float = 600) -> float:
    from loopguard_site.jobs import FINISHED_STATES
    from loopguard_site.replay.models import ReplayJob

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = ReplayJob.objects.get(pk=job_id)
        if (at_least is not None and job.done >= at_least) or job.state in FINISHED_STATES:
            return time.monotonic()
        time.sleep(0.1)
    raise SystemExit(f"replay job {job_id} did not get there in {seconds} s")


def wait_replaying(job_id: int, seconds: float = 600) -> None:
    """Return once one of the job's runs has been replaying for a second:
    a kill then lands mid-replay, not between a run's commit and its ack."""
    from datetime import timedelta

    from django.utils import timezone

    from loopguard_site.replay.models import ReplayRun

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        since = timezone.now() - timedelta(seconds=1)
        if ReplayRun.objects.filter(job_id=job_id, state="running", started__lt=since).exists():
            return
        time.sleep(0.05)
    raise SystemExit(f"no run of replay job {job_id} was replaying within {seconds} s")


def worker_sigkill(group, env, logs, sessions: int, events: int) -> dict:
    # A task can also vanish with its worker (killed between the broker's
    # BRPOP and kombu's note of the unacknowledged message): the sweep
    # recovers that, so its period must fit in this scenario's wait.
    url = start_lab(group, env, logs, "lab-kill", LOOPGUARD_JOB_STALE_SECONDS="60", LOOPGUARD_LIVE_SWEEP_SECONDS="2")
    _, token = account("killer")
    ids = long_sessions(sessions, events)
    visibility = {"LOOPGUARD_JOB_VISIBILITY_SECONDS": "5"}
    worker = start_worker(group, env, logs, "worker-kill", **visibility)
    job = replay_job(url, token, ids)
    wait_job(job, at_least=max(1, sessions // 3))
    wait_replaying(job)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    group.running.remove(worker)
    killed = time.monotonic()
    start_worker(group, env, logs, "worker-kill-2", **visibility)
    recovery = wait_job(job) - killed
    done, stored, twice, lost = job_counts(job)
    return {"scenario": "worker SIGKILL mid replay (runs)", "acked": done, "stored": stored, "twice": twice,
            "lost": lost, "recovery": recovery, "errors": []}  # fmt: skip


def redis_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--bind", HOST],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            return process
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("redis-server did not start") from None
            time.sleep(0.05)


def broker_restart(group, env, logs, sessions: int, events: int) -> dict:
    port = free_port()
    broker = redis_server(port)
    try:
        broker_env = {**env, "REDIS_URL": f"redis://{HOST}:{port}/0"}
        url = start_lab(group, broker_env, logs, "lab-broker", LOOPGUARD_JOB_STALE_SECONDS="10",
                        LOOPGUARD_LIVE_SWEEP_SECONDS="2")  # fmt: skip
        _, token = account("broker")
        ids = long_sessions(sessions, events)
        start_worker(group, broker_env, logs, "worker-broker")
        job = replay_job(url, token, ids)
        wait_job(job, at_least=max(1, sessions // 3))
        broker.kill()
        broker.wait()
        broker = redis_server(port)  # empty: every queued task is gone
        restarted = time.monotonic()
        recovery = wait_job(job) - restarted
    finally:
        broker.kill()
        broker.wait()
    done, stored, twice, lost = job_counts(job)
    return {"scenario": "broker restart, no persistence (runs)", "acked": done, "stored": stored, "twice": twice,
            "lost": lost, "recovery": recovery, "errors": []}  # fmt: skip


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def big_post(group, env, logs) -> str:
    port = free_port()
    log = logs / "lab-body.log"
    lab = group.start([str(LOOPGUARD), "lab", "--host", HOST, "--port", str(port)], env, log)
    wait_listening(lab, port, log, 120)

    def login_ms() -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(f"http://{HOST}:{port}/accounts/login/", timeout=60) as answer:
            answer.read()
        return (time.perf_counter() - start) * 1000

    quiet = [login_ms() for _ in range(20)]
    before = rss_mb(lab.pid)
    sent = 0
    done = threading.Event()

    def attack() -> None:
        nonlocal sent
        head = (f"POST /upload/ HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                f"Content-Length: {200 * 1024 * 1024}\r\n\r\n").encode()  # fmt: skip
        block = b"x" * (1024 * 1024)
        try:
            with socket.create_connection((HOST, port)) as connection:
                connection.sendall(head)
                while sent < 200 * 1024 * 1024:
                    connection.sendall(block)
                    sent += len(block)
        except OSError:
            pass
        done.set()

    attacker = threading.Thread(target=attack)
    attacker.start()
    during = [login_ms() for _ in range(20)]
    attacker.join()
    grown = rss_mb(lab.pid) - before
    return (
        f"anonymous 200 MB POST: refused after {sent / 1024 / 1024:.0f} MB sent; lab RSS {grown:+.1f} MB; "
        f"login page median {statistics.median(quiet):.1f} ms before, {statistics.median(during):.1f} ms during "
        f"(mean {statistics.mean(quiet):.1f} / {statistics.mean(during):.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 producers, smaller replay jobs")
    parser.add_argument("--retries", type=int, default=8, help="the storm's producers' LiveSession retries")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=SCENARIOS, help="run these scenarios only")
    args = parser.parse_args(argv)
    producers, messages = (60, 10) if args.quick else (300, 20)
    sessions, events = (6, 20_000) if args.quick else (12, 40_000)
    rows, notes = [], []
    with bench_lab("loopguard_bench_faults", 13) as env, processes() as group:
        env = {**env, "LOOPGUARD_TOKEN_DAILY_QUOTA": str(10**9)}
        logs = Path(tempfile.mkdtemp(prefix="lg-faults-"))
        if "deep" in args.only:
            rows.append(deep_message(group, env, logs, messages=50))
            group.stop_all()
        if "storm" in args.only:
            storm = connect_storm(group, env, logs, producers, messages, args.retries)
            rows.append(storm)
            peaks = ", ".join(f"{name} {peak}" for name, peak in storm["peaks"].items())
            notes.append(f"peak PostgreSQL connections per lab (cap 20): {peaks}")
            group.stop_all()
        if "kill" in args.only:
            rows.append(worker_sigkill(group, env, logs, sessions, events))
            group.stop_all()
        if "broker" in args.only:
            rows.append(broker_restart(group, env, logs, sessions, events))
            group.stop_all()
        if "body" in args.only:
            notes.append(big_post(group, env, logs))
    print(f"faults ({load_average()}; logs in {logs})")
    print(f"| {'scenario':<40} | acknowledged | stored | duplicates | lost | recovery s |")
    print(f"| {'-' * 40} | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        recovery = "—" if row["recovery"] is None else f"{row['recovery']:.1f}"
        counts = f"{row['acked']} | {row['stored']} | {row['twice']} | {row['lost']}"
        print(f"| {row['scenario']:<40} | {counts} | {recovery} |")
        if row["errors"]:
            notes.append(f"{row['scenario']}: {len(row['errors'])} producer errors:")
            notes += [f"  {count} × {error}" for error, count in Counter(row["errors"]).most_common()]
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
