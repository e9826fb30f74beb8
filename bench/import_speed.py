"""Transcript import speed: parse, check and store sessions of 1,000 to
100,000 events through `session_import_file` (the service behind the upload
page, the API and `loopguard import`), on the configured database.

Each size is an agent session in the `events` format (turn, reasoning,
tool call, tool result; about 70 bytes an event) and, beside it, the same
session as an OpenAI chat completion stream (one chunk a line). The parse
column is `parse_bytes` alone; store is the rest (the storable check, the
session row, the events, the raw upload). Sessions are deleted afterwards.

On a shared machine wall time says as much about the load as about the
code, so each size is imported `--repeat` times (min, median and mean shown) and
the CPU seconds are counted beside it: the importing process's own
while `session_import_file` runs (`python CPU`) and, on PostgreSQL, its server process's (`server CPU`, from
/proc: the database must run on this machine), both per million events.

    .venv/bin/python bench/import_speed.py                 # SQLite in .data/ (the embedded lab)
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/loopguard .venv/bin/python bench/import_speed.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.lab_processes import cpu_seconds, load_average  # noqa: E402
from detector.importers import parse_bytes  # noqa: E402
from loopguard_site.transcripts.models import Session  # noqa: E402
from loopguard_site.transcripts.services import session_import_file  # noqa: E402

SIZES = (1_000, 10_000, 100_000)


def events_file(events: int) -> bytes:
    lines = []
    for n in range(events // 4):
        lines += [
            {"type": "turn"},
            {"type": "reasoning", "text": f"step {n}: read it again"},
            {"type": "tool_call", "name": "read", "args": {"path": f"f{n % 7}.py"}, "id": f"c{n}"},
            {"type": "tool_result", "id": f"c{n}", "ok": True, "output": "x" * 20},
        ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def openai_file(events: int) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "bench", "choices": []}
    lines = [
        json.dumps({**chunk, "choices": [{"index": 0, "delta": {"reasoning_content": f"think {n} "}}]})
        for n in range(events)
    ]
    lines.append(json.dumps({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    return ("\n".join(lines) + "\n").encode()


def server_pid() -> int | None:
    """The PostgreSQL server process of this connection (None on SQLite)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def measure(name: str, data: bytes) -> tuple[int, float, float, float, float]:
    """Events, parse seconds, store seconds, python CPU seconds and server CPU seconds of one import."""
    server = server_pid()
    start = time.perf_counter()
    parse_bytes(data, name)
    parsed = time.perf_counter()
    server_before = cpu_seconds(server) if server else 0.0
    cpu_before = time.process_time()
    session = session_import_file(data=data, filename=name)
    total = time.perf_counter() - parsed
    cpu = time.process_time() - cpu_before
    server_cpu = cpu_seconds(server) - server_before if server else 0.0
    count = session.event_count
    Session.objects.filter(pk=session.pk).delete()
    # session_import_file parses again: its store time is its total minus one parse
    parse = parsed - start
    return count, parse, total - parse, cpu, server_cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="imports of each size (default 3)")
    args = parser.parse_args(argv)
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; {load_average()}")
    print(
        "| format | events | MB | parse s | store s | total s (min, median, mean) | events/s (best, median, mean)"
        " | python CPU s/M events | server CPU s/M events |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in SIZES:
        for fmt, build in (("events", events_file), ("openai", openai_file)):
            data = build(size)
            runs = [measure(f"bench.{fmt}", data) for _ in range(args.repeat)]
            count = runs[0][0]
            totals = [parse + store for _, parse, store, _, _ in runs]
            times = (min(totals), statistics.median(totals), statistics.fmean(totals))
            million = count / 1e6
            python = statistics.median(cpu for *_, cpu, _ in runs) / million
            server = statistics.median(server for *_, server in runs) / million
            print(
                f"| {fmt} | {count:,} | {len(data) / 1e6:.1f} | {statistics.median(r[1] for r in runs):.2f}"
                f" | {statistics.median(r[2] for r in runs):.2f}"
                f" | {', '.join(f'{t:.2f}' for t in times)} | {', '.join(f'{count / t:,.0f}' for t in times)}"
                f" | {python:.2f} | {server:.2f} |",
                flush=True,
            )
    print(load_average())


if __name__ == "__main__":
    main()
