"""Transcript import speed: parse, check and store sessions of 1,000 to
100,000 events through `session_import_file` (the service behind the upload
page, the API and `loopguard import`), on the configured database.

Each size is an agent session in the `events` format (turn, reasoning,
tool call, tool result; about 70 bytes an event) and, beside it, the same
session as an OpenAI chat completion stream (one chunk a line). The parse
column is `parse_bytes` alone; store is the rest (the storable check, the
session row, the events, the raw upload). Sessions are deleted afterwards.

    .venv/bin/python bench/import_speed.py                 # SQLite in .data/ (the embedded lab)
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/loopguard .venv/bin/python bench/import_speed.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

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


def measure(name: str, data: bytes) -> tuple[int, float, float]:
    start = time.perf_counter()
    parse_bytes(data, name)
    parsed = time.perf_counter()
    session = session_import_file(data=data, filename=name)
    total = time.perf_counter() - parsed
    count = session.event_count
    Session.objects.filter(pk=session.pk).delete()
    # session_import_file parses again: its store time is its total minus one parse
    parse = parsed - start
    return count, parse, total - parse


def main() -> None:
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}")
    print(f"{'format':<8} {'events':>8} {'MB':>6} {'parse s':>8} {'store s':>8} {'total s':>8} {'events/s':>9}")
    for size in SIZES:
        for fmt, build in (("events", events_file), ("openai", openai_file)):
            data = build(size)
            count, parse, store = measure(f"bench.{fmt}", data)
            total = parse + store
            print(
                f"{fmt:<8} {count:>8} {len(data) / 1e6:>6.1f} {parse:>8.2f} {store:>8.2f} {total:>8.2f} "
                f"{count / total:>9.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
