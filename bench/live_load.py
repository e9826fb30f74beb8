"""Live load: K producer WebSockets at R events/s each, one viewer on each
session, against Daphne with channels-redis and PostgreSQL.

Daphne (`daphne loopguard_site.asgi:application`) runs as a subprocess on a
dedicated database (`loopguard_bench_live`, created and dropped here) and
Redis db 11. A bench user and API token come from the accounts service.
For each K of the ramp, K fresh live sessions get a viewer
(`/ws/sessions/<id>`) and a producer (`/ws/ingest/<id>`) that sends
`content` events (16 characters of the corpus's normal content rows) at R
a second, `--batch` events a message (default 1), for the stage's duration
(first sends spread over one interval), without waiting for
acknowledgements. Each event carries its send time (`sent`, an unknown
field the lab keeps), so the viewer measures ingest-to-viewer latency.
After the stage, acks and viewers get a bounded drain (30 s): `unacked` =
sent but not acknowledged by then (a backlog), `lost` = acknowledged
(stored) but never received by the session's viewer; acked ev/s = events
acknowledged / time from the first send to the last ack. CPU: the Daphne
process's user+system time over the stage (from /proc), in % of one core;
the client (this process) likewise. The ramp stops at the first stage that
misses the target (p99 over 250 ms, a lost event, a socket the server
closed, or acknowledged rate under 95 % of the offered rate); with
`--throughput` the latency does not stop it (the most events/s stored and
forwarded, whatever the latency).

`--profile-ingest` instead times `live_ingest` in this process with a kept
connection and with a new one a message (as Daphne calls it), then
cProfiles the latter: where a message's time goes.

    .venv/bin/python bench/live_load.py                    # K = 1, 10, 50, 100, 250, 500; 20 s each
    .venv/bin/python bench/live_load.py --quick            # K = 1, 10, 50; 8 s each
    .venv/bin/python bench/live_load.py --batch 20         # 20 events a message (one a second)
    .venv/bin/python bench/live_load.py --throughput --producers 1 5 10 25 --seconds 10
    .venv/bin/python bench/live_load.py --profile-ingest
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.detector_speed import corpus_texts  # noqa: E402
from bench.lab_processes import HOST, bench_lab, cpu_seconds, load_average, processes, start_daphne  # noqa: E402
from detector.evaluation import percentile  # noqa: E402

DATABASE = "loopguard_bench_live"
REDIS_DB = 11
TARGET_P99_MS = 250
DELTA_CHARS = 16
TEXT_CHARS = 2_000_000  # of the corpus's normal content, shared by the producers
DRAIN_S = 30  # how long acks and viewers may lag behind the last send
CONNECT_AT_ONCE = 25  # handshakes in flight (each authenticates against the database)


@dataclass
class SessionCounts:
    sent: int = 0
    acked: int = 0
    errors: int = 0
    last_ack_at: float = 0.0
    closed: list[str] = field(default_factory=list)  # sockets the server closed: who and the close code
    received: set[int] = field(default_factory=set)


async def open_socket(url: str, headers: dict, gate: asyncio.Semaphore):
    from websockets.asyncio.client import connect

    async with gate:
        return await connect(url, additional_headers=headers, max_size=None, open_timeout=120)


async def view(socket_, counts: SessionCounts, latencies: list[float], stop: asyncio.Event) -> None:
    """Receive until told to stop; each event's latency is measured once (by its seq)."""
    from websockets.exceptions import ConnectionClosed

    while not stop.is_set():
        try:
            raw = await asyncio.wait_for(socket_.recv(), timeout=0.5)
        except TimeoutError:
            continue
        except ConnectionClosed as exc:
            counts.closed.append(f"viewer {exc.rcvd.code if exc.rcvd else 'dropped'}")
            return
        now = time.monotonic()
        for event in json.loads(raw).get("events", ()):
            if "sent" in event and event["seq"] not in counts.received:
                counts.received.add(event["seq"])
                latencies.append(now - event["sent"])


async def produce(
    socket_, counts: SessionCounts, text: str, text_start: int, rate: float, batch: int, start_at: float, end_at: float
):
    """Send `batch` events a message, `rate` events/s, from start_at to end_at
    without waiting for acks (a reader counts them), then wait (bounded) for
    the last ack. Counts are in events."""

    from websockets.exceptions import ConnectionClosed

    async def read_answers() -> None:
        try:
            async for raw in socket_:
                answer = json.loads(raw)
                if "ack" in answer:
                    counts.acked, counts.last_ack_at = answer["ack"] * batch, time.monotonic()
                elif "error" in answer:
                    counts.errors += 1
        except ConnectionClosed as exc:
            counts.closed.append(f"producer {exc.rcvd.code if exc.rcvd else 'dropped'}")

    reader = asyncio.create_task(read_answers())
    try:
        await _send_all(socket_, counts, text, text_start, rate, batch, start_at, end_at, reader)
    except ConnectionClosed:
        pass  # the reader records the close
    reader.cancel()
    await asyncio.gather(reader, return_exceptions=True)


async def _send_all(socket_, counts: SessionCounts, text, text_start, rate, batch, start_at, end_at, reader) -> None:
    seq = 0
    while (due := start_at + seq * batch / rate) < end_at:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        events = []
        for _ in range(batch):
            offset = (text_start + counts.sent * DELTA_CHARS) % (len(text) - DELTA_CHARS)
            counts.sent += 1
            events.append({"type": "content", "text": text[offset : offset + DELTA_CHARS], "sent": time.monotonic()})
        seq += 1
        await socket_.send(json.dumps({"seq": seq, "events": events}))
    drain_end = time.monotonic() + DRAIN_S
    while counts.acked < counts.sent and time.monotonic() < drain_end and not reader.done():
        await asyncio.sleep(0.1)


async def stage(
    port: int, token: str, session_ids: list[int], rate: float, batch: int, seconds: float, text: str, server_pid: int
):
    headers = {"Authorization": f"Bearer {token}"}
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    counts = {sid: SessionCounts() for sid in session_ids}
    latencies: list[float] = []
    stop = asyncio.Event()
    connect_start = time.monotonic()
    base = f"ws://{HOST}:{port}/ws"
    viewer_sockets = await asyncio.gather(*(open_socket(f"{base}/sessions/{s}", headers, gate) for s in session_ids))
    producer_sockets = await asyncio.gather(*(open_socket(f"{base}/ingest/{s}", headers, gate) for s in session_ids))
    await asyncio.gather(*(sock.recv() for sock in producer_sockets))  # {"resume": 0}
    connect_s = time.monotonic() - connect_start
    viewers = [
        asyncio.create_task(view(v, counts[s], latencies, stop))
        for v, s in zip(viewer_sockets, session_ids, strict=True)
    ]
    cpu_before, own_before, wall_before = cpu_seconds(server_pid), _own_cpu(), time.monotonic()
    start_at = time.monotonic() + 0.5
    # Each producer reads the corpus text from its own offset (no copy), and its first
    # message is spread over one interval (producers do not send in lockstep).
    interval = batch / rate
    await asyncio.gather(
        *(
            produce(
                p,
                counts[s],
                text,
                s * 997,
                rate,
                batch,
                start_at + interval * i / len(session_ids),
                start_at + seconds,
            )
            for i, (p, s) in enumerate(zip(producer_sockets, session_ids, strict=True))
        )
    )
    drain_end = time.monotonic() + DRAIN_S
    while time.monotonic() < drain_end and any(len(c.received) < c.acked for c in counts.values()):
        await asyncio.sleep(0.1)
    wall = time.monotonic() - wall_before
    server_cpu = (cpu_seconds(server_pid) - cpu_before) / wall
    own_cpu = (_own_cpu() - own_before) / wall
    stop.set()
    await asyncio.gather(*viewers)
    await asyncio.gather(*(sock.close() for sock in viewer_sockets + producer_sockets))
    acked = sum(c.acked for c in counts.values())
    return {
        "k": len(session_ids),
        "offered": len(session_ids) * rate,
        "sent": sum(c.sent for c in counts.values()),
        "acked": acked,
        "ack_rate": acked / max(max(c.last_ack_at for c in counts.values()) - start_at, seconds),
        "unacked": sum(c.sent - c.acked for c in counts.values()),
        # acknowledged (stored) but never seen by the session's viewer
        "lost": sum(len(set(range(1, c.acked + 1)) - c.received) for c in counts.values()),
        "lost_sessions": sum(1 for c in counts.values() if len(c.received) < c.acked),
        "errors": sum(c.errors for c in counts.values()),
        "closed": [what for c in counts.values() for what in c.closed],
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "server_cpu": server_cpu,
        "own_cpu": own_cpu,
        "connect_s": connect_s,
    }


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


def bench_user_token() -> tuple[object, str]:
    from django.contrib.auth import get_user_model

    from loopguard_site.accounts.services import api_token_create

    user = get_user_model().objects.create_user(username="bench-live", password=None)
    _, token = api_token_create(user=user, name="live load bench")
    return user, token


def live_sessions(user, count: int) -> list[int]:
    from loopguard_site.transcripts.services import session_create_live

    return [session_create_live(model="bench", title=f"bench {n}", uploader=user).pk for n in range(count)]


def profile_ingest(text: str, messages: int) -> None:
    """Time `live_ingest` per message with a kept connection and, as Daphne
    calls it (`database_sync_to_async` closes the connection after each call,
    CONN_MAX_AGE being 0), with a new connection a message; then cProfile the latter."""
    import cProfile
    import pstats

    from django.db import close_old_connections

    from loopguard_site.live.services import live_ingest

    user, _ = bench_user_token()
    sessions = live_sessions(user, 3)
    events = [{"type": "content", "text": text[i * DELTA_CHARS : (i + 1) * DELTA_CHARS]} for i in range(messages)]

    def ingest_all(session_id: int, reconnect: bool) -> float:
        start = time.perf_counter()
        for seq, event in enumerate(events, start=1):
            if reconnect:
                close_old_connections()
            live_ingest(session_id=session_id, seq=seq, events=[event])
            if reconnect:
                close_old_connections()
        return 1000 * (time.perf_counter() - start) / messages

    print(f"live_ingest, {messages} messages of one event each; {load_average()}")
    print(f"  kept connection:         {ingest_all(sessions[0], reconnect=False):.1f} ms a message")
    print(f"  as Daphne calls it:      {ingest_all(sessions[1], reconnect=True):.1f} ms a message")
    profiler = cProfile.Profile()
    profiler.enable()
    ingest_all(sessions[2], reconnect=True)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def print_row(row: dict, rate: float, seconds: float) -> None:
    def ms(value):
        return "-" if value is None else f"{1000 * value:,.0f}"

    print(
        f"| {row['k']} × {rate:g}/s | {row['offered']:,.0f} | {row['ack_rate']:,.0f} | {row['sent']:,}"
        f" | {row['unacked']:,} | {row['lost']} ({row['lost_sessions']} sessions)"
        f" | {ms(row['p50'])} | {ms(row['p99'])} | {100 * row['server_cpu']:.0f} %"
        f" | {100 * row['own_cpu']:.0f} % | {row['connect_s']:.1f} | {load_average()[13:]} |",
        flush=True,
    )


def saturated(row: dict, latency: bool = True) -> str:
    reasons = []
    if latency and (row["p99"] is None or row["p99"] * 1000 > TARGET_P99_MS):
        reasons.append(f"p99 over {TARGET_P99_MS} ms")
    if row["lost"]:
        reasons.append("events lost")
    if row["closed"]:
        reasons.append(f"{len(row['closed'])} sockets closed by the server ({', '.join(sorted(set(row['closed'])))})")
    if row["errors"]:
        reasons.append(f"{row['errors']} messages refused")
    if row["unacked"] or row["ack_rate"] < 0.95 * row["offered"]:
        reasons.append("acknowledged rate under 95 % of offered")
    return ", ".join(reasons)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="K = 1, 10, 50 for 8 s each")
    parser.add_argument("--producers", type=int, nargs="+", default=None, help="the ramp of K")
    parser.add_argument("--rate", type=float, default=20.0, help="events per second per producer (default 20)")
    parser.add_argument("--batch", type=int, default=1, help="events per message (default 1: one message an event)")
    parser.add_argument(
        "--throughput", action="store_true", help="ramp on past the latency target, until events are lost or back up"
    )
    parser.add_argument("--seconds", type=float, default=None, help="sending time per stage (default 20, --quick 8)")
    parser.add_argument("--profile-ingest", type=int, nargs="?", const=400, default=None, metavar="MESSAGES",
                        help="profile live_ingest in-process instead (default 400 messages)")  # fmt: skip
    args = parser.parse_args(argv)
    ramp = args.producers or ([1, 10, 50] if args.quick else [1, 10, 50, 100, 250, 500])
    seconds = args.seconds or (8.0 if args.quick else 20.0)
    _, text = corpus_texts(TEXT_CHARS)["content"]
    logs = Path(tempfile.mkdtemp(prefix="loopguard-bench-live-"))
    with bench_lab(DATABASE, REDIS_DB) as env, processes() as servers:
        if args.profile_ingest:
            profile_ingest(text, args.profile_ingest)
            return 0
        user, token = bench_user_token()
        sessions = live_sessions(user, sum(ramp))
        server, port = start_daphne(servers, env, logs / "daphne.log")
        print(
            f"daphne pid {server.pid} on {HOST}:{port}; {seconds:g} s a stage;"
            f" {args.batch} event(s) a message; {load_average()}"
        )
        print("| producers × rate | offered ev/s | acked ev/s | sent | unacked | lost | p50 ms | p99 ms | daphne CPU"
              " | client CPU | connect s | load average after |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for k in ramp:
            chosen, sessions = sessions[:k], sessions[k:]
            row = asyncio.run(stage(port, token, chosen, args.rate, args.batch, seconds, text, server.pid))
            print_row(row, args.rate, seconds)
            if reason := saturated(row, latency=not args.throughput):
                print(f"\nsaturated at {k} producers: {reason}; the ramp stops here")
                break
    print(f"daphne log: {logs / 'daphne.log'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
