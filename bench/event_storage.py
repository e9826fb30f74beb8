"""Reading a session's events for a replay: one row per event (as stored
now) against per-session segments of compressed JSON Lines (a proposal), on
PostgreSQL.

The sessions of bench/replay_throughput.py are imported through
`session_import_file` into a dedicated database (`loopguard_bench_storage`,
created and dropped here). Their events are then also written as segments
of `--segment` events (JSON Lines, zlib level 1; a row per segment with the
session, its first and last seq, so the session page's windows of text stay
addressable by seq) in a scratch table. Each way of reading every session's
events, oldest first, is timed `--repeat` times (the best and the mean are
printed), alone and then feeding the `default` profile's Monitor:

- rows, ORM JSON: `values_list("seq", "data").iterator(2000)`, the replay before;
- rows, a query per session: `session_event_stream` (keyset chunks of
  10,000 events, each session's read back as one row), as the replay at
  3227c70 queried;
- rows, sessions together: `sessions_event_streams` (the sessions of up to
  10,000 events together in one query, a row per session), the replay now;
- segments: fetch, decompress, split lines, `event_from_json`.

    .venv/bin/python bench/event_storage.py            # 200 sessions
    .venv/bin/python bench/event_storage.py --quick    # 40 sessions
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lab_processes import bench_lab, load_average  # noqa: E402
from bench.replay_throughput import import_sessions, session_files  # noqa: E402

DATABASE = "loopguard_bench_storage"
REDIS_DB = 9
SEGMENT_TABLE = "bench_event_segment"
Streams = Callable[[list[int]], Iterator[tuple[int, Iterator[dict]]]]  # session ids -> (id, its events)


def segments_write(session_ids: list[int], size: int) -> tuple[float, int]:
    """Write every session's events as segments; (seconds, bytes stored)."""
    from django.db import connection

    from loopguard_site.transcripts.event_rows import event_json
    from loopguard_site.transcripts.models import Event

    start = time.perf_counter()
    stored = 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {SEGMENT_TABLE} (session_id bigint, first_seq int, last_seq int, data bytea,"
            " PRIMARY KEY (session_id, first_seq))"
        )
        for session_id in session_ids:
            rows = Event.objects.filter(session_id=session_id).order_by("seq").values_list("seq", "data")
            lines = [(seq, event_json(data)) for seq, data in rows]
            with cursor.cursor.copy(f"COPY {SEGMENT_TABLE} FROM STDIN") as copy:
                for at in range(0, len(lines), size):
                    part = lines[at : at + size]
                    blob = zlib.compress("\n".join(text for _, text in part).encode(), 1)
                    stored += len(blob)
                    copy.write_row((session_id, part[0][0], part[-1][0], blob))
    return time.perf_counter() - start, stored


def rows_orm(session_id: int) -> Iterator[dict]:
    from loopguard_site.transcripts.models import Event

    rows = Event.objects.filter(session_id=session_id).order_by("seq").values_list("seq", "data")
    for _, data in rows.iterator(chunk_size=2000):
        yield data


def rows_text(session_id: int) -> Iterator[dict]:
    from loopguard_site.transcripts.selectors import session_event_stream

    for _, event in session_event_stream(session_id):
        yield event


def rows_together(session_ids: list[int]) -> Iterator[tuple[int, Iterator[dict]]]:
    from loopguard_site.transcripts.models import Session
    from loopguard_site.transcripts.selectors import sessions_event_streams

    counts = dict(Session.objects.filter(pk__in=session_ids).values_list("pk", "event_count"))
    for session_id, stream in sessions_event_streams([(pk, counts[pk]) for pk in session_ids]):
        yield session_id, (event for _, event in stream)


def one_by_one(read: Callable[[int], Iterator[dict]]) -> Streams:
    """Read sessions one at a time with `read`."""
    return lambda session_ids: ((session_id, read(session_id)) for session_id in session_ids)


def segments(session_id: int) -> Iterator[dict]:
    from django.db import connection

    from loopguard_site.transcripts.event_rows import event_from_json

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT data FROM {SEGMENT_TABLE} WHERE session_id = %s ORDER BY first_seq", [session_id])
        blobs = [bytes(blob) for (blob,) in cursor.fetchall()]
    for blob in blobs:
        for line in zlib.decompress(blob).decode().split("\n"):
            yield event_from_json(line)


def timed(streams: Streams, session_ids: list[int], models: dict, repeat: int) -> list[float]:
    from detector.monitor import Monitor

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for session_id, events in streams(session_ids):
            if models is None:
                for _ in events:
                    pass
            else:
                monitor = Monitor("default", model=models[session_id])
                for event in events:
                    monitor.feed(event)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 sessions instead of 200")
    parser.add_argument("--segment", type=int, default=1000, help="events per segment (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per way (default 3)")
    parser.add_argument("--database", default=DATABASE, help=f"database to create and drop (default {DATABASE})")
    parser.add_argument("--redis-db", type=int, default=REDIS_DB, help=f"Redis db number (default {REDIS_DB})")
    args = parser.parse_args(argv)
    files = session_files(40 if args.quick else 200)
    with bench_lab(args.database, args.redis_db):
        from django.db import connection

        from loopguard_site.transcripts.models import Event, Session

        session_ids, events = import_sessions(files)
        models = dict(Session.objects.filter(pk__in=session_ids).values_list("pk", "model"))
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_total_relation_size(%s)", [Event._meta.db_table])
            (rows_bytes,) = cursor.fetchone()
        write_s, segment_bytes = segments_write(session_ids, args.segment)
        print(
            f"{len(session_ids)} sessions, {events:,} events; one row per event: {rows_bytes / 1e6:.1f} MB"
            f" (table and indexes); segments of {args.segment}: {segment_bytes / 1e6:.1f} MB of zlib data,"
            f" written in {write_s:.1f} s; {load_average()}"
        )
        print("| read | feeding | best s | mean s | events/s (best) | events/s (mean) |")
        print("|---|---|---|---|---|---|")
        ways = {
            "rows, ORM JSON (the first replay)": one_by_one(rows_orm),
            "rows, a query per session (as the replay at 3227c70)": one_by_one(rows_text),
            "rows, sessions together, a row per session (replay now)": rows_together,
            "segments, zlib JSON Lines": one_by_one(segments),
        }
        for feeding in ("nothing", "default Monitor"):
            for name, read in ways.items():
                times = timed(read, session_ids, None if feeding == "nothing" else models, args.repeat)
                best, mean = min(times), statistics.mean(times)
                print(
                    f"| {name} | {feeding} | {best:.2f} | {mean:.2f} | {events / best:,.0f} | {events / mean:,.0f} |",
                    flush=True,
                )
        print(load_average())
    return 0


if __name__ == "__main__":
    sys.exit(main())
