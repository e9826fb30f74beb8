"""Live load: K producer WebSockets at R events/s each, one viewer on each
session, against Daphne with channels-redis and PostgreSQL.

`--servers N` Daphne processes (`daphne loopguard_site.asgi:application`,
the same settings, each on its own port: a deployment puts them behind one
address) run on a dedicated database (`loopguard_bench_live`, created and
dropped here; `--database`) and Redis db 11 (`--redis-db`). A bench user and API token come from the
accounts service. For each K of the ramp, K fresh live sessions get a
viewer (`/ws/sessions/<id>`) and a producer (`/ws/ingest/<id>`, protocol 3 as `LiveSession`): session i's
producer on server i mod N, its viewer on the next server (with N > 1 every
event crosses processes through the channel layer). Producers send
`content` events (16 characters of the corpus's normal content rows) at R a
second, `--batch` events a message (default 1), for the stage's duration
(first sends spread over one interval between messages), without waiting
for acknowledgements; with `--linger S` events come one by one at R a
second and are batched as `LiveSession.send` batches them (a message once
the batch's first event is S seconds old or `--batch` events wait), so
latency includes the linger. Each event carries its send time (`sent`, an
unknown field the lab keeps; CLOCK_MONOTONIC, one clock for every
process), so the viewer measures send-to-viewer latency: with a linger the
time the event is due (when a model would hand it over: the linger and any
delay of the load generator's own count), else when its message is made.
Each client process sends every message of its producers from one timer
(`send_all`), as it falls due.

The load generator is `--clients P` processes (default 2), each driving its
share of the sessions on its own event loop, so that it is not the
bottleneck (and with its garbage collector off: its pauses would count as
latency), through the bench's own minimal WebSocket client
(`bench/ws_client.py`, cheaper than `websockets`); their CPU is reported. `--timeline` prints each stage's latency
per second of sending (events, p50, p99, max): whether a tail is the first
seconds or a pause. After the stage, acks and viewers get a
bounded drain (30 s): `unacked` = sent but not acknowledged by then (a
backlog), `lost` = acknowledged (stored) but never received by the
session's viewer; acked ev/s = events acknowledged / time from the first
send to the last ack. CPU in % of one core over the stage: the Daphne
processes together, the client processes together (and per message acknowledged: the server's CPU
ms a message, the event-loop threads' share in brackets, the rest being
the ingest thread; less sensitive to a loaded machine than the rates;
and the frames the server sent a message acknowledged, counted by the
clients: acks, and events frames to the viewer),
the PostgreSQL backends of the bench's database, redis-server (the
machine's one: other users' work included), and the whole machine
(every process, from /proc/stat: PostgreSQL and Redis included, and
whatever else runs). The ramp stops at the first stage that misses the
target (p99 over 250 ms, a lost event, a socket the server closed, or
acknowledged rate under 95 % of the offered rate); with `--throughput` only
a lost event or a closed socket stops it (every stage runs, however far
behind the server falls).

`--profile-servers` runs the Daphne processes under cProfile (their event
loops) and prints the merged profile at the end. `--py-spy DIR` samples
them with py-spy instead (every thread, at their usual speed; cProfile
slows them about twentyfold): `bench/spy_summary.py DIR/*.txt` sums it.
A running thread is sampled where it holds the GIL or waits for it (after
each socket call the event loop waits while the ingest thread runs:
where it waits shows where it gives the GIL away); `--py-spy-gil` keeps
only the samples of the thread holding it: where the CPU goes.

`--profile-ingest` instead times `live_ingest_batch` in this process for
batches of 1 to 500 one-event messages of as many sessions (the CPU of
each batch; median and mean), then cProfiles the second largest: where a
batch's time goes. Each session of a batch sends the corpus text from its
own place on, the sessions spread over the whole text (`--batch N`: N
events a message).

    .venv/bin/python bench/live_load.py                    # K = 1, 10, 50, 100, 250, 500; 20 s each
    .venv/bin/python bench/live_load.py --quick            # K = 1, 10, 50; 8 s each
    .venv/bin/python bench/live_load.py --producers 100 200 500 --servers 2 --throughput
    .venv/bin/python bench/live_load.py --batch 20         # 20 events a message (one a second)
    .venv/bin/python bench/live_load.py --servers 2 --producers 500 --batch 20 --seconds 120 --timeline
    .venv/bin/python bench/live_load.py --profile-ingest
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import json
import math
import multiprocessing
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.detector_speed import corpus_texts  # noqa: E402
from bench.lab_processes import (  # noqa: E402
    HOST,
    POSTGRES,
    BackendCpu,
    bench_lab,
    cpu_seconds,
    load_average,
    process_ids,
    processes,
    start_daphne,
)
from bench.ws_client import DROPPED, WebSocketClient, connect  # noqa: E402
from detector.evaluation import percentile  # noqa: E402

DATABASE = "loopguard_bench_live"
REDIS_DB = 11
TARGET_P99_MS = 250
TARGET_LINGER_P99_MS = 500  # send to viewer, the producer's linger included
DELTA_CHARS = 16
TEXT_CHARS = 2_000_000  # of the corpus's normal content, shared by the producers
DRAIN_S = 30  # how long acks and viewers may lag behind the last send
CONNECT_AT_ONCE = 25  # handshakes in flight per client process (each authenticates against the database)
ACK_PREFIX = '{"ack": '  # acks are read without a JSON parse: the client must stay cheap
# as LiveSession: an ack covers every message up to its seq, held up to a second unless a message asks for it
# (`ack_now`, as the last one here); a lab before it answers each message
PRODUCER_QUERY = "?protocol=3"


@dataclass
class SessionCounts:
    sent: int = 0
    acked: int = 0
    messages: int = 0  # messages sent
    acked_messages: int = 0
    upto: list[int] = field(default_factory=lambda: [0])  # events sent up to each message's seq (index)
    errors: int = 0
    ack_frames: int = 0  # acks received: one a message, or one for several (protocols 2 and 3)
    viewer_frames: int = 0  # events frames the viewer received
    last_ack_at: float = 0.0
    closed: list[str] = field(default_factory=list)  # sockets the server closed: who and the close code
    received: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Stage:
    """What every client process of a stage needs."""

    ports: list[int]
    token: str
    rate: float
    batch: int  # events a message; with a linger, the most a message takes
    linger: float  # 0: `batch` events a message; else batched as LiveSession does (its `linger`)
    seconds: float
    text: str
    sessions: int  # K, for spreading the first sends


async def open_socket(url: str, headers: dict, gate: asyncio.Semaphore) -> WebSocketClient:
    async with gate:
        return await connect(url, headers)


def closed_by_server(counts: SessionCounts, who: str) -> Callable[[int | None], None]:
    def record(code: int | None) -> None:
        counts.closed.append(f"{who} {'dropped' if code is DROPPED else code}")

    return record


def view(socket_: WebSocketClient, counts: SessionCounts, latencies: list[tuple[float, float]]) -> None:
    """Count what the viewer receives from now on: each event's latency is
    measured once (by its seq), kept with its send time."""

    def received(raw: str) -> None:
        now = time.monotonic()
        events = json.loads(raw).get("events", ())
        counts.viewer_frames += bool(events)
        for event in events:
            if "sent" in event and event["seq"] not in counts.received:
                counts.received.add(event["seq"])
                latencies.append((event["sent"], now - event["sent"]))

    socket_.on_text, socket_.on_close = received, closed_by_server(counts, "viewer")


def events_a_message(stage: Stage) -> int:
    """`batch`; with a linger the first event and those up to linger seconds after it, at most `batch`."""
    return min(stage.batch, math.ceil(stage.linger * stage.rate - 1e-9) + 1) if stage.linger else stage.batch


class Producer:
    """One session's producer: `rate` events a second from `start_at` to
    `end_at`, sent without waiting for acknowledgements (they are counted as
    they come). Without a linger `batch` events a message, made at once;
    with one, batched as `LiveSession.send` batches them: the event that
    finds the batch's first `linger` seconds old, or the batch full, sends
    it, and each event is stamped with the time it is due (when the model
    handed it over), so the latency counts the linger and any delay of the
    load generator's own; without one, when its message is made, as
    before. Counts are in events."""

    def __init__(self, socket_: WebSocketClient, counts: SessionCounts, stage: Stage, text_start, start_at, end_at):
        self.socket, self.counts, self.stage, self.text_start = socket_, counts, stage, text_start
        self.start_at, rate = start_at, stage.rate
        # the events due before end_at; without a linger the last message's batch may run past it
        due = math.ceil((end_at - start_at) * rate)
        while due and start_at + (due - 1) / rate >= end_at:
            due -= 1
        self.due = -(-due // stage.batch) * stage.batch if not stage.linger else due
        self.most = events_a_message(stage)

        def answered(raw: str) -> None:
            if raw.startswith(ACK_PREFIX):
                counts.ack_frames += 1
                counts.acked_messages = int(raw[len(ACK_PREFIX) : -1])
                counts.acked, counts.last_ack_at = counts.upto[counts.acked_messages], time.monotonic()
            elif "error" in json.loads(raw):
                counts.errors += 1

        socket_.on_text, socket_.on_close = answered, closed_by_server(counts, "producer")

    def next_at(self) -> float | None:
        """When the next message goes, None when all are sent: with a linger
        when its last event is due, else when its first is (its events are
        made at once)."""
        sent = self.counts.sent
        if sent >= self.due or self.socket.ended.done():
            return None
        last = sent + min(self.most, self.due - sent) - 1 if self.stage.linger else sent
        return self.start_at + last / self.stage.rate

    def send_next(self) -> None:
        counts, stage, rate = self.counts, self.stage, self.stage.rate
        size = min(self.most, self.due - counts.sent)
        events, now = [], time.monotonic()
        for _ in range(size):
            offset = (self.text_start + counts.sent * DELTA_CHARS) % (len(stage.text) - DELTA_CHARS)
            sent = self.start_at + counts.sent / rate if stage.linger else now
            events.append({"type": "content", "text": stage.text[offset : offset + DELTA_CHARS], "sent": sent})
            counts.sent += 1
        # the producer's close flushes the last batch, asking for its ack at once as LiveSession's does
        _send_message(self.socket, counts, events, ack_now=counts.sent >= self.due)


async def send_all(producers: list[Producer]) -> None:
    """Every producer's messages, each when it is due: one timer for the
    client process, not one a producer (a producer of 20 events a second
    waking for each cost the load generator most of its CPU, taken from the
    server's machine). Then wait (bounded) for the last acks."""
    schedule = [(when, index) for index, producer in enumerate(producers) if (when := producer.next_at()) is not None]
    heapq.heapify(schedule)
    while schedule:
        when, index = schedule[0]
        wait = when - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
            continue
        producer = producers[index]
        try:
            producer.send_next()
        except ConnectionError:
            heapq.heappop(schedule)  # on_close recorded it
            continue
        if (when := producer.next_at()) is None:
            heapq.heappop(schedule)
        else:
            heapq.heapreplace(schedule, (when, index))
    drain_end = time.monotonic() + DRAIN_S
    while time.monotonic() < drain_end and any(
        p.counts.acked < p.counts.sent and not p.socket.ended.done() for p in producers
    ):
        await asyncio.sleep(0.1)


def _send_message(socket_: WebSocketClient, counts: SessionCounts, events: list[dict], ack_now: bool = False) -> None:
    counts.messages += 1
    counts.upto.append(counts.upto[-1] + len(events))
    message = {"seq": counts.messages, "events": events} | ({"ack_now": True} if ack_now else {})
    socket_.send(json.dumps(message))


async def drive(stage: Stage, positions: list[tuple[int, int]], barrier) -> dict:
    """One client process: connect the viewers and producers of its sessions
    ((position in the stage, session id) pairs), wait for every client at the
    barrier, run the stage, drain; its counts, latencies and CPU."""
    headers = {"Authorization": f"Bearer {stage.token}"}
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    counts = {sid: SessionCounts() for _, sid in positions}
    latencies: list[tuple[float, float]] = []
    ports = stage.ports

    def url(kind: str, server: int, sid: int, query: str = "") -> str:
        return f"ws://{HOST}:{ports[server % len(ports)]}/ws/{kind}/{sid}{query}"

    connect_start = time.monotonic()
    viewer_sockets = await asyncio.gather(
        *(open_socket(url("sessions", i + 1, s), headers, gate) for i, s in positions)
    )
    producer_sockets = await asyncio.gather(
        *(open_socket(url("ingest", i, s, PRODUCER_QUERY), headers, gate) for i, s in positions)
    )
    await asyncio.gather(*(sock.recv() for sock in producer_sockets))  # {"resume": 0}
    connect_s = time.monotonic() - connect_start
    for viewer, (_, sid) in zip(viewer_sockets, positions, strict=True):
        view(viewer, counts[sid], latencies)
    await asyncio.get_running_loop().run_in_executor(None, barrier.wait)
    own_before, start_at = _own_cpu(), time.monotonic() + 0.5  # the clients pass the barrier within a few ms
    # Each producer reads the corpus text from its own offset (no copy), and its first
    # message is spread over one interval between messages (producers do not send in lockstep).
    interval = events_a_message(stage) / stage.rate
    await send_all(
        [
            Producer(p, counts[s], stage, s * 997, start_at + interval * i / stage.sessions, start_at + stage.seconds)
            for p, (i, s) in zip(producer_sockets, positions, strict=True)
        ]
    )
    drain_end = time.monotonic() + DRAIN_S
    while time.monotonic() < drain_end and any(len(c.received) < c.acked for c in counts.values()):
        await asyncio.sleep(0.1)
    own_cpu = _own_cpu() - own_before
    for sock in viewer_sockets + producer_sockets:
        sock.on_text = sock.on_close = None  # our own closes are no server's
    await asyncio.gather(*(sock.close() for sock in viewer_sockets + producer_sockets))
    return {
        "sent": sum(c.sent for c in counts.values()),
        "acked": sum(c.acked for c in counts.values()),
        "messages": sum(c.messages for c in counts.values()),
        "acked_messages": sum(c.acked_messages for c in counts.values()),
        "last_ack_at": max(c.last_ack_at for c in counts.values()),
        "unacked": sum(c.sent - c.acked for c in counts.values()),
        # acknowledged (stored) but never seen by the session's viewer
        "lost": sum(len(set(range(1, c.acked + 1)) - c.received) for c in counts.values()),
        "lost_sessions": sum(1 for c in counts.values() if len(c.received) < c.acked),
        "errors": sum(c.errors for c in counts.values()),
        "ack_frames": sum(c.ack_frames for c in counts.values()),
        "viewer_frames": sum(c.viewer_frames for c in counts.values()),
        "closed": [what for c in counts.values() for what in c.closed],
        "latencies": latencies,
        "own_cpu_s": own_cpu,
        "connect_s": connect_s,
        "start_at": start_at,
        "done_at": time.monotonic(),
    }


def _client(stage: Stage, positions: list[tuple[int, int]], barrier, results) -> None:
    # The load generator's own garbage-collector pauses would stall its
    # sends and receives and count as the server's latency: its few cycles
    # can wait until the process ends.
    gc.disable()
    results.put(asyncio.run(drive(stage, positions, barrier)))


def run_stage(
    stage: Stage,
    session_ids: list[int],
    clients: int,
    server_pids: list[int],
    database: str,
    spy: Path | None = None,
    spy_gil: bool = False,
) -> dict:
    """The stage over `clients` processes (forked: they share the text); the
    merged row. With `spy`, py-spy samples each server over the stage
    (`spy_servers`; `spy_gil`: only the thread holding the GIL)."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(clients + 1)
    results = context.Queue()
    positions = list(enumerate(session_ids))
    workers = [
        context.Process(target=_client, args=(stage, positions[n::clients], barrier, results)) for n in range(clients)
    ]
    for worker in workers:
        worker.start()
    barrier.wait()  # every client connected: the clock starts
    spies = spy_servers(server_pids, stage.seconds, spy, len(session_ids), spy_gil) if spy else []
    postgres = BackendCpu(f"{POSTGRES}/postgres", database)
    redis_pids = process_ids("redis-server")
    server_before, loops_before = _servers_cpu(server_pids), _servers_cpu(server_pids, main_thread=True)
    redis_before = _servers_cpu(redis_pids)
    machine_before, wall_before = _machine_cpu(), time.monotonic()
    parts = [results.get() for _ in workers]
    wall = max(part["done_at"] for part in parts) - wall_before
    server_cpu_s = _servers_cpu(server_pids) - server_before
    loops_cpu_s = _servers_cpu(server_pids, main_thread=True) - loops_before
    server_cpu = server_cpu_s / wall
    machine_cpu = (_machine_cpu() - machine_before) / wall
    postgres_cpu, redis_cpu = postgres.stop() / wall, (_servers_cpu(redis_pids) - redis_before) / wall
    for spy_process in spies:
        spy_process.wait()
    for worker in workers:
        worker.join()
    start_at = min(part["start_at"] for part in parts)
    sent_latencies = [pair for part in parts for pair in part["latencies"]]
    latencies = [latency for _, latency in sent_latencies]
    acked = sum(part["acked"] for part in parts)
    return {
        "k": len(session_ids),
        "offered": len(session_ids) * stage.rate,
        "sent": sum(part["sent"] for part in parts),
        "messages": sum(part["messages"] for part in parts),
        # the server's CPU for each message it stored, acknowledged and forwarded
        "cpu_ms_message": 1000 * server_cpu_s / (acked_messages := max(sum(p["acked_messages"] for p in parts), 1)),
        "loop_ms_message": 1000 * loops_cpu_s / acked_messages,  # of which the event loops' (the main threads)
        # frames the server sent a message: its acks, and its events frames to the viewer
        "acks_message": sum(p["ack_frames"] for p in parts) / acked_messages,
        "viewer_frames_message": sum(p["viewer_frames"] for p in parts) / acked_messages,
        "acked": acked,
        "ack_rate": acked / max(max(part["last_ack_at"] for part in parts) - start_at, stage.seconds),
        **{key: sum(part[key] for part in parts) for key in ("unacked", "lost", "lost_sessions", "errors")},
        "closed": [what for part in parts for what in part["closed"]],
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "server_cpu": server_cpu,
        "own_cpu": sum(part["own_cpu_s"] for part in parts) / wall,
        "postgres_cpu": postgres_cpu,  # the backends of the bench's database
        "redis_cpu": redis_cpu,  # redis-server: the machine's one, whoever else uses it
        "machine_cpu": machine_cpu,
        "connect_s": max(part["connect_s"] for part in parts),
        "timeline": latency_timeline(sent_latencies, start_at),
    }


def latency_timeline(sent_latencies: list[tuple[float, float]], start_at: float) -> list[tuple]:
    """Per second of the stage (by send time): (second, events, p50, p99,
    max latency): whether the tail is the first seconds or spikes."""
    by_second: dict[int, list[float]] = {}
    for sent, latency in sent_latencies:
        by_second.setdefault(int(sent - start_at), []).append(latency)
    return [
        (second, len(values), percentile(values, 0.5), percentile(values, 0.99), max(values))
        for second, values in sorted(by_second.items())
    ]


def spy_servers(pids: list[int], seconds: float, out: Path, k: int, gil: bool = False) -> list:
    """py-spy sampling each server process (every thread, 100 a second,
    only samples of a thread that is running; with `gil`, only of the
    thread holding the GIL) for `seconds`, from now:
    collapsed stacks in `out`/daphne-<pid>-k<k>.txt (`bench/spy_summary.py`
    sums them). Not paused to be sampled (`--nonblocking`), so the servers
    run at their usual speed."""
    import subprocess

    out.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            [
                str(Path(sys.executable).parent / "py-spy"),
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(max(1, int(seconds))),
                "--format",
                "raw",
                "--threads",
                "--nonblocking",
                *(["--gil"] if gil else []),
                "--output",
                str(out / f"daphne-{pid}-k{k}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid in pids
    ]


def _servers_cpu(pids: list[int], main_thread: bool = False) -> float:
    return sum(cpu_seconds(pid, pid if main_thread else None) for pid in pids)


def _machine_cpu() -> float:
    """CPU seconds every process of the machine has used (not idle, not waiting for I/O), from /proc/stat."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


def bench_user_token() -> tuple[object, object, str]:
    """The bench's user, an admin of the default project, its project and an API token of it."""
    from django.contrib.auth import get_user_model

    from loopguard_site.accounts.models import Role
    from loopguard_site.accounts.services import api_token_create, default_project, membership_set

    user = get_user_model().objects.create_user(username="bench-live", password=None)
    project = default_project()
    membership_set(user=user, project=project, role=Role.ADMIN)
    _, token = api_token_create(user=user, project=project, name="live load bench")
    return user, project, token


def live_sessions(user, project, count: int) -> list[int]:
    from loopguard_site.transcripts.services import session_create_live

    return [
        session_create_live(model="bench", title=f"bench {n}", uploader=user, project=project).pk for n in range(count)
    ]


def profile_ingest(text: str, messages: int, events_a_message: int = 1) -> None:
    """Time `live_ingest_batch` as the ingest thread calls it (a kept
    connection): batches of B messages of `events_a_message` events (`--batch`),
    one a session, `messages` messages in all per B; then cProfile the
    largest batches."""
    import cProfile

    from loopguard_site.live.services import IngestRequest, live_ingest_batch
    from loopguard_site.transcripts.event_rows import event_json

    user, project, _ = bench_user_token()
    sizes = (1, 10, 100, 500)
    count = messages * events_a_message
    events = [{"type": "content", "text": text[i * DELTA_CHARS : (i + 1) * DELTA_CHARS]} for i in range(count)]

    def request(session_id: int, seq: int, first: int) -> IngestRequest:
        """As a socket submits it: the events' texts from the check
        (`parse_message`). The session reads the text from event `first` on:
        the sessions of a batch are spread over the whole text (all from its
        start, sessions sending a few messages each would all send its
        first few thousand characters, a padded table)."""
        start = (first + (seq - 1) * events_a_message) % count
        batch = events[start : start + events_a_message] or events[:events_a_message]
        return IngestRequest(session_id, seq, batch, texts=[event_json(event) for event in batch])

    def ingest_all(size: int) -> list[float]:
        """The CPU seconds of each batch."""
        sessions = live_sessions(user, project, size)
        firsts = [place * (count // size) for place in range(size)]
        rounds = max(1, messages // size)
        # The sessions' first messages: their LiveStream rows and Monitors.
        live_ingest_batch([request(sid, 1, first) for sid, first in zip(sessions, firsts, strict=True)])
        spent = []
        for seq in range(2, rounds + 2):
            batch = [request(sid, seq, first) for sid, first in zip(sessions, firsts, strict=True)]
            start = time.process_time()
            live_ingest_batch(batch)
            spent.append(time.process_time() - start)
        return spent

    print(f"live_ingest_batch, messages of {events_a_message} event(s), B sessions a batch; CPU; {load_average()}")
    for size in sizes:
        spent = ingest_all(size)
        median, mean = statistics.median(spent), statistics.fmean(spent)
        print(
            f"  B = {size:>3}: {len(spent):>4} batches, {1000 * median:7.1f} ms a batch (mean {1000 * mean:.1f}),"
            f" {1e6 * median / size:6.0f} µs a message (mean {1e6 * mean / size:.0f})"
        )
    profiler = cProfile.Profile()
    profiler.enable()
    ingest_all(sizes[-2])
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def print_row(row: dict, rate: float, seconds: float) -> None:
    def ms(value):
        return "-" if value is None else f"{1000 * value:,.0f}"

    print(
        f"| {row['k']} × {rate:g}/s | {row['offered']:,.0f} | {row['ack_rate']:,.0f} | {row['sent']:,}"
        f" | {row['messages']:,} | {row['unacked']:,} | {row['lost']} ({row['lost_sessions']} sessions)"
        f" | {ms(row['p50'])} | {ms(row['p99'])} | {100 * row['server_cpu']:.0f} %"
        f" | {row['cpu_ms_message']:.3f} ({row['loop_ms_message']:.3f})"
        f" | {row['acks_message']:.2f} + {row['viewer_frames_message']:.2f}"
        f" | {100 * row['own_cpu']:.0f} % | {100 * row['postgres_cpu']:.0f} % | {100 * row['redis_cpu']:.0f} %"
        f" | {100 * row['machine_cpu']:.0f} % | {row['connect_s']:.1f}"
        f" | {load_average()[13:]} |",
        flush=True,
    )


def _batching(batch: int, linger: float) -> str:
    if linger:
        return f"events batched as LiveSession does (linger {linger:g} s, at most {batch} a message)"
    return f"{batch} event(s) a message"


def saturated(row: dict, target_ms: float, targets: bool = True) -> str:
    reasons = []
    if targets and (row["p99"] is None or row["p99"] * 1000 > target_ms):
        reasons.append(f"p99 over {target_ms:g} ms")
    if row["lost"]:
        reasons.append("events lost")
    if row["closed"]:
        reasons.append(f"{len(row['closed'])} sockets closed by the server ({', '.join(sorted(set(row['closed'])))})")
    if row["errors"]:
        reasons.append(f"{row['errors']} messages refused")
    if targets and (row["unacked"] or row["ack_rate"] < 0.95 * row["offered"]):
        reasons.append("acknowledged rate under 95 % of offered")
    return ", ".join(reasons)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="K = 1, 10, 50 for 8 s each")
    parser.add_argument("--producers", type=int, nargs="+", default=None, help="the ramp of K")
    parser.add_argument("--rate", type=float, default=20.0, help="events per second per producer (default 20)")
    parser.add_argument(
        "--batch",
        type=int,
        default=None,
        help="events per message (default 1: one message an event; with --linger the most, default 256)",
    )
    parser.add_argument(
        "--linger",
        type=float,
        nargs="?",
        const=0.25,
        default=0.0,
        metavar="S",
        help="batch as LiveSession does, waiting up to S seconds (its default 0.25)",
    )
    parser.add_argument(
        "--throughput", action="store_true", help="run every stage unless events are lost or sockets closed"
    )
    parser.add_argument("--seconds", type=float, default=None, help="sending time per stage (default 20, --quick 8)")
    parser.add_argument("--servers", type=int, default=1, help="Daphne processes (default 1)")
    parser.add_argument("--clients", type=int, default=2, help="load generator processes (default 2)")
    parser.add_argument(
        "--profile-servers", action="store_true", help="cProfile the Daphne processes' event loops; print it at the end"
    )
    parser.add_argument(
        "--py-spy", type=Path, default=None, metavar="DIR",
        help="sample the Daphne processes with py-spy over each stage, into DIR (bench/spy_summary.py)",
    )  # fmt: skip
    parser.add_argument(
        "--py-spy-gil", action="store_true", help="with --py-spy: only samples of the thread holding the GIL (CPU)"
    )
    parser.add_argument("--timeline", action="store_true", help="print each stage's latency per second of sending")
    parser.add_argument("--profile-ingest", type=int, nargs="?", const=2000, default=None, metavar="N",
                        help="profile live_ingest_batch in-process (default 2000 messages a batch size)")  # fmt: skip
    parser.add_argument(
        "--database", default=DATABASE, help=f"the bench's database, created and dropped (default {DATABASE})"
    )
    parser.add_argument(
        "--redis-db", type=int, default=REDIS_DB, help=f"the bench's Redis database (default {REDIS_DB})"
    )
    args = parser.parse_args(argv)
    batch = args.batch or (256 if args.linger else 1)
    target_ms = TARGET_LINGER_P99_MS if args.linger else TARGET_P99_MS
    ramp = args.producers or ([1, 10, 50] if args.quick else [1, 10, 50, 100, 250, 500])
    seconds = args.seconds or (8.0 if args.quick else 20.0)
    _, text = corpus_texts(TEXT_CHARS)["content"]
    logs = Path(tempfile.mkdtemp(prefix="loopguard-bench-live-"))
    with bench_lab(args.database, args.redis_db) as env, processes() as servers:
        if args.profile_ingest:
            profile_ingest(text, args.profile_ingest, args.batch or 1)
            return 0
        user, project, token = bench_user_token()
        sessions = live_sessions(user, project, sum(ramp))
        env = {**env, "LOOPGUARD_TOKEN_DAILY_QUOTA": str(10**12)}  # the bench's one token sends millions of messages
        profiles = [logs / f"daphne-{n}.prof" for n in range(args.servers)] if args.profile_servers else None
        daphnes = [
            start_daphne(servers, env, logs / f"daphne-{n}.log", profile=profiles and profiles[n])
            for n in range(args.servers)
        ]
        print(
            f"{args.servers} daphne process(es) on {HOST}, ports {', '.join(str(port) for _, port in daphnes)};"
            f" {args.clients} client processes; {seconds:g} s a stage; {_batching(batch, args.linger)};"
            f" {os.cpu_count()} CPUs; {load_average()}"
        )
        print("| producers × rate | offered ev/s | acked ev/s | sent | messages | unacked | lost | p50 ms | p99 ms"
              " | daphne CPU | daphne CPU ms a message (event loops) | frames a message (acks + viewer)"
              " | client CPU | PostgreSQL CPU | Redis CPU | machine CPU | connect s"
              " | load average after |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        ports, pids = [port for _, port in daphnes], [server.pid for server, _ in daphnes]
        for k in ramp:
            chosen, sessions = sessions[:k], sessions[k:]
            stage = Stage(ports, token, args.rate, batch, args.linger, seconds, text, k)
            row = run_stage(stage, chosen, min(args.clients, k), pids, args.database, args.py_spy, args.py_spy_gil)
            print_row(row, args.rate, seconds)
            if args.timeline:
                print("  second: events p50/p99/max ms | " + " | ".join(
                    f"{second}: {count} {1000 * p50:.0f}/{1000 * p99:.0f}/{1000 * top:.0f}"
                    for second, count, p50, p99, top in row["timeline"]
                ), flush=True)  # fmt: skip
            if reason := saturated(row, target_ms, targets=not args.throughput):
                print(f"\nsaturated at {k} producers: {reason}; the ramp stops here")
                break
    if args.profile_servers:
        stats = pstats.Stats(*map(str, profiles))
        stats.sort_stats("tottime").print_stats(40)
        stats.sort_stats("cumulative").print_stats(60)
    print(f"daphne logs: {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
