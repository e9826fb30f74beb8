"""Server time of the lab's busiest list pages at scale: the overview (`/`)
and the session list (`/sessions/`), with 10,000 sessions and 100,000
detections, measured through Django's test client (the whole request in
process: middleware, views, queries, templates; no network, no browser).

The data goes into a throwaway PostgreSQL database (created, migrated and
dropped here; the one in DATABASE_URL is only used to reach the server):
12 models, sessions created over the last 60 days, 2 profiles each with a
verdict per session (30% of sessions loop under `default`, 20% under
`preview`), 100,000 detections over 6 detector/type pairs on the looping
sessions, 4,000 reviewers' labels and 40 sessions open live. Rows are
written with bulk_create in batches.

Each page is asked WARMUP times, then N times; the table gives the
median, mean and 90th percentile in milliseconds (and the median and mean
CPU milliseconds of this process: the view, templates and driver, not the
database server's), for a superuser (every
project) and for a member of the one project (the project filter). Before
and after the table: `calib`, a fixed 3-million-step Python loop, and the
load average, to say how busy the machine was.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/loopguard .venv/bin/python bench/lab_pages.py

(`--requests N` for N timed requests a row, `--quick` for 10).

`--large` (issue 21 item 4) builds 100,000 sessions and 10,000,000 events
instead, written with PostgreSQL COPY (the events table's indexes and
foreign keys built once after the load, as a restore does): 99 events a
session on average and one long session of 100,000 events, 200,000
verdicts, 1,000,000 detections, 45,000 labels and 20,000 tag links. Its
table has a row per page the lab serves at that scale: the session list
unfiltered, with each filter, sorted otherwise, deep pages (rows 5,001 and
50,001 on: the cursors its links carry), the API's list, the overview, and
the session page of the long session and of a common one, and what the
long one loads on demand (items after the head and in the middle, a text
window, a zoom of the timeline); with `queries`, the number of SQL
statements the page ran (what load does not change). The long session's
stored layout is built after the load (`stored layouts`), as an import
would have stored it. `--rows PREFIX` times only the rows so named.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SESSIONS = 10_000
DETECTIONS = 100_000
LABELS = 4_000
LIVE = 40
MODELS = [f"model-{n:02d}" for n in range(12)]
PAIRS = [
    ("text_loop", "block_cycle"),
    ("reasoning_checkpoint", "type1"),
    ("tool_repetition", "consecutive_identical_tool_calls"),
    ("tool_outcomes", "repeated_failing_batch"),
    ("repeated_failure", "repeated_failure"),
    ("backoff", "backoff_advised"),
]
WARMUP = 3
BATCH = 5_000


def throwaway_database() -> tuple[str, str]:
    """(admin URL, URL of a new empty database named after this process)."""
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/loopguard")
    parts = urlsplit(base)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit("bench/lab_pages.py: DATABASE_URL must point at a PostgreSQL server")
    name = f"loopguard_bench_pages_{os.getpid()}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return admin, urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(admin: str, url: str) -> None:
    from django.db import connections

    connections.close_all()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.lstrip("/")}" WITH (FORCE)')


def populate(user) -> None:
    from loopguard_site.accounts.services import default_project
    from loopguard_site.replay.models import Detection, SessionVerdict
    from loopguard_site.review.models import Label
    from loopguard_site.transcripts.models import Session

    rng = random.Random(16)
    project = default_project()
    now = dt.datetime.now(dt.UTC)
    sessions = [
        Session(
            title=f"bench session {n}",
            model=MODELS[n % len(MODELS)],
            source_format="events",
            project=project,
            state=Session.State.LIVE if n < LIVE else Session.State.STORED,
            event_count=rng.randint(10, 5_000),
        )
        for n in range(SESSIONS)
    ]
    Session.objects.bulk_create(sessions, batch_size=BATCH)
    ids = list(Session.objects.order_by("id").values_list("id", flat=True))
    # created is auto_now_add: spread it over 60 days afterwards, in one statement
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE transcripts_session SET created = %s"
            " - (id %% 60) * interval '1 day' - (id %% 1440) * interval '1 minute'",
            [now],
        )
    looping = {"default": ids[: SESSIONS * 3 // 10], "preview": ids[SESSIONS * 8 // 10 :]}
    targets = [(i, "default") for i in looping["default"]] + [(i, "preview") for i in looping["preview"]]
    found = Counter(targets[n % len(targets)] for n in range(DETECTIONS))
    verdicts = [
        SessionVerdict(session_id=i, profile=profile, looped=(i, profile) in found, detection_count=found[i, profile])
        for profile in looping
        for i in ids
    ]
    SessionVerdict.objects.bulk_create(verdicts, batch_size=BATCH)
    detections = []
    for n in range(DETECTIONS):
        session_id, profile = targets[n % len(targets)]
        detector, kind = PAIRS[rng.randrange(len(PAIRS))]
        detections.append(
            Detection(
                session_id=session_id, profile=profile, event_seq=n % 500 + 1, detector=detector, type=kind,
                channel="content", start=n % 9000, end=n % 9000 + 200, at=n % 9000 + 240, unit="x", period=20,
                repeats=10, action="stop", message="bench",
            )
        )  # fmt: skip
        if len(detections) == BATCH:
            Detection.objects.bulk_create(detections)
            detections = []
    Detection.objects.bulk_create(detections)
    labelled = Detection.objects.order_by("id").values_list("id", "session_id", "profile", "detector", "type")
    labels = [
        Label(
            session_id=session_id, item=f"bench:{pk}", reviewer=user, detection_id=pk, profile=profile,
            detector=detector, detection_type=kind, channel="content",
            label="false_positive" if pk % 4 == 0 else "true_loop",
        )
        for pk, session_id, profile, detector, kind in labelled[: DETECTIONS : DETECTIONS // LABELS]
    ]  # fmt: skip
    Label.objects.bulk_create(labels, batch_size=BATCH)


LARGE_SESSIONS = 100_000
LARGE_EVENTS = 10_000_000
LONG_EVENTS = 100_000  # the long session's; the others share the rest
LONG_DETECTIONS = 1_000
LARGE_DETECTIONS = 1_000_000
TAGS = ("prod", "nightly", "agents")
DAYS = 60


def copy_rows(table: str, columns: tuple[str, ...], rows) -> None:
    """COPY `rows` (tuples in `columns` order) into `table`."""
    from django.db import connection

    names = ", ".join(f'"{column}"' for column in columns)  # quoted: `end` is a keyword
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def copy_with_indexes_after(table: str, columns: tuple[str, ...], rows) -> None:
    """COPY into `table` with its unique and foreign-key constraints and
    secondary indexes dropped, then built again once over the whole load
    (as pg_restore does): far faster than keeping them up to date row by row."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = %s::regclass AND contype IN ('u', 'f')",
            [table],
        )
        constraints = cursor.fetchall()
        for name, _ in constraints:
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT LIKE '%%_pkey'", [table]
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
    copy_rows(table, columns, rows)
    with connection.cursor() as cursor:
        for _, definition in indexes:
            cursor.execute(definition)
        for name, definition in constraints:
            cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')


def event_counts() -> list[int]:
    """Events per session: the long session first (index 100), the others
    99 on average, pairs of sessions spread by up to +-59 about it."""
    rest, others = LARGE_EVENTS - LONG_EVENTS, LARGE_SESSIONS - 1
    base, extra = divmod(rest, others)
    counts = []
    for i in range(others):
        spread = (i // 2 * 7) % 60 * (1 if i % 2 == 0 else -1) if i < others - others % 2 else 0
        counts.append(base + (1 if i < extra else 0) + spread)
    counts.insert(100, LONG_EVENTS)
    return counts


def event_data(seq: int) -> tuple[str, str]:
    """(type, JSON) of event `seq`: a turn of reasoning, text and a failing tool call."""
    kind = ("turn", "reasoning", "content", "tool_call", "tool_result")[seq % 5]
    if kind == "turn":
        return kind, '{"type": "turn"}'
    if kind == "reasoning":
        return kind, f'{{"type": "reasoning", "text": "Let me look at the build output again, step {seq}."}}'
    if kind == "content":
        return kind, f'{{"type": "content", "text": "Running the tests once more ({seq}). "}}'
    if kind == "tool_call":
        return kind, f'{{"type": "tool_call", "name": "bash", "args": {{"cmd": "make test"}}, "id": "c{seq}"}}'
    return kind, f'{{"type": "tool_result", "id": "c{seq - 1}", "ok": false, "output": "error: 3 failures\\n"}}'


def populate_large(user) -> dict:
    """The 100,000-session data set, by COPY; what the table asks for:
    the long session's id and a common session's. Sessions arrive evenly
    over `DAYS` days in id order, the newest open live; which of them loop,
    are labelled or not scanned is spread evenly over that time (every
    n-th session), so a filter's matches are as near the top of the list
    as their share says."""
    from django.db import connection

    from loopguard_site.accounts.services import default_project

    project = default_project()
    now = dt.datetime.now(dt.UTC)
    counts = event_counts()
    step = time.perf_counter()
    with connection.cursor() as cursor:
        # The overview's tally triggers are off for the load (a row trigger
        # per session and verdict would double its time); the tallies are
        # counted once at the end, as their migration does.
        cursor.execute("SET session_replication_role = replica")

    def phase(name: str) -> None:
        nonlocal step
        print(f"  {name}: {time.perf_counter() - step:.1f} s", flush=True)
        step = time.perf_counter()

    copy_rows(
        "transcripts_session",
        ("title", "model", "source_format", "parser_version", "created", "project_id", "state", "event_count",
         "profile"),
        (
            (f"bench session {i}", MODELS[i % len(MODELS)], "events", "events/1",
             now - dt.timedelta(days=DAYS) * (LARGE_SESSIONS - i) / LARGE_SESSIONS, project.pk,
             "live" if i >= LARGE_SESSIONS - LIVE else "stored", counts[i], "default")
            for i in range(LARGE_SESSIONS)
        ),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM transcripts_session ORDER BY id")
        ids = [row[0] for row in cursor.fetchall()]
    phase("sessions")
    copy_with_indexes_after(
        "transcripts_event",
        ("session_id", "seq", "type", "data"),
        ((pk, seq, *event_data(seq)) for pk, n in zip(ids, counts, strict=True) for seq in range(1, n + 1)),
    )
    phase("events")
    # 5% of sessions are not scanned; under default 30% loop, under preview 20%
    scanned = [(i, pk) for i, pk in enumerate(ids) if i % 20 != 19]
    looping = [(pk, "default") for i, pk in scanned if i % 10 < 3] + [
        (pk, "preview") for i, pk in scanned if i % 10 in (3, 4)
    ]
    per_pair, spare = divmod(LARGE_DETECTIONS - LONG_DETECTIONS, len(looping))
    found = {pair: per_pair + (1 if n < spare else 0) for n, pair in enumerate(looping)}
    long_id = ids[100]
    found[long_id, "default"] = found.get((long_id, "default"), 0) + LONG_DETECTIONS
    copy_rows(
        "replay_sessionverdict",
        ("session_id", "profile", "looped", "detection_count", "first_detection_channel", "first_detection_detector",
         "first_detection_type", "updated"),
        ((pk, profile, (pk, profile) in found, found.get((pk, profile), 0), "", "", "", now)
         for _, pk in scanned for profile in ("default", "preview")),
    )  # fmt: skip
    phase("verdicts")
    copy_rows(
        "replay_detection",
        ("session_id", "profile", "event_seq", "detector", "type", "channel", "start", "end", "at", "unit", "period",
         "repeats", "action", "message", "turn", "extra"),
        ((pk, profile, n % 90 + 5, *PAIRS[(pk + n) % len(PAIRS)], "content", n * 400, n * 400 + 200, n * 400 + 240,
          "x", 20, 10, "stop", "bench", n // 5, "{}")
         for (pk, profile), total in found.items() for n in range(total)),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE replay_sessionverdict v SET first_detection_id = d.id, first_detection_seq = d.event_seq,"
            " first_detection_channel = d.channel, first_detection_detector = d.detector,"
            " first_detection_type = d.type, first_detection_start = d.start, first_detection_at = d.at"
            " FROM (SELECT DISTINCT ON (session_id, profile) * FROM replay_detection"
            "       ORDER BY session_id, profile, event_seq, id) d"
            " WHERE v.session_id = d.session_id AND v.profile = d.profile"
        )
    phase("detections")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, session_id, profile, detector, type FROM replay_detection WHERE id % 25 = 0 ORDER BY id"
        )
        judged = cursor.fetchall()
    session_labels = [(i, pk) for i, pk in scanned if i % 10 >= 5][::10]
    copy_rows(
        "review_label",
        ("session_id", "item", "reviewer_id", "label", "note", "detection_id", "profile", "detector", "detection_type",
         "channel", "created", "updated"),
        [*((session_id, f"bench:{pk}", user.pk, "false_positive" if pk % 4 == 0 else "true_loop", "", pk, profile,
            detector, kind, "content", now, now) for pk, session_id, profile, detector, kind in judged),
         *((pk, "session", user.pk, "missed_loop" if i % 7 == 0 else "clean", "", None, "", "", "", "", now, now)
           for i, pk in session_labels)],
    )  # fmt: skip
    with connection.cursor() as cursor:
        for name in TAGS:
            cursor.execute("INSERT INTO transcripts_tag (name) VALUES (%s)", [name])
        cursor.execute("SELECT id FROM transcripts_tag ORDER BY id")
        tag_ids = [row[0] for row in cursor.fetchall()]
    copy_rows(
        "transcripts_session_tags",
        ("session_id", "tag_id"),
        ((pk, tag_ids[i % len(tag_ids)]) for i, pk in enumerate(ids) if i % 5 == 0),
    )
    from loopguard_site.transcripts.layout_rows import layout_min_events, session_layouts_update
    from loopguard_site.transcripts.models import Session

    # As the import's scan stores them: the long session's (the others keep none).
    session_layouts_update(Session.objects.filter(pk__in=ids, event_count__gte=layout_min_events()))
    phase("stored layouts")
    tallies = importlib.import_module("loopguard_site.overview.migrations.0001_tallies")
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute(tallies.TALLIES_FROM_ROWS)
    phase("labels, tags and the overview's tallies")
    return {"long": long_id, "common": ids[1234]}


def calib_ms() -> float:
    """A fixed 3-million-step Python loop, timed: how busy the machine is."""
    start = time.perf_counter()
    total = 0
    for step in range(3_000_000):
        total += step
    return (time.perf_counter() - start) * 1000


def load_average() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def timings(client, path: str, n: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of `n` requests (this process's CPU: the
    view, templates and the driver; the database server's own is not in it)."""
    for _ in range(WARMUP):
        assert client.get(path).status_code == 200, path
    times, cpu = [], []
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        answer = client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert answer.status_code == 200, path
    return times, cpu


def after(n: int, **filters) -> str:
    """`after=` of the page of the session list (newest first) that starts
    at row n + 1, as the list's links give it."""
    from urllib.parse import quote

    from loopguard_site.timeline.selectors import Cursor, session_list

    value, pk = session_list(**filters).values_list("created", "id")[n - 1]
    return "after=" + quote(Cursor(value, pk).token())


def large_rows(ids: dict) -> list[tuple[str, str]]:
    """(row name, path) of the `--large` table."""
    day = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3)).date()
    return [
        ("list", "/sessions/"),
        ("list: model", "/sessions/?model=model-03"),
        ("list: verdict loop", "/sessions/?verdict=loop"),
        ("list: verdict clean", "/sessions/?verdict=clean"),
        ("list: not scanned", "/sessions/?verdict=unscanned"),
        ("list: profile + verdict", "/sessions/?profile=preview&verdict=loop"),
        ("list: detector", "/sessions/?detector=backoff"),
        ("list: detector + type", "/sessions/?detector=text_loop&type=block_cycle"),
        ("list: labelled", "/sessions/?label=labelled"),
        ("list: false positive", "/sessions/?label=false_positive"),
        ("list: unlabelled", "/sessions/?label=unlabelled"),
        ("list: created day", f"/sessions/?created={day}"),
        ("list: live", "/sessions/?live=1"),
        ("list: search", "/sessions/?q=session+4242"),
        ("list: sort title", "/sessions/?sort=title"),
        ("list: sort events", "/sessions/?sort=-events"),
        (f"list: row {LARGE_SESSIONS // 20 + 1:,} on", f"/sessions/?{after(LARGE_SESSIONS // 20)}"),
        (f"list: row {LARGE_SESSIONS // 2 + 1:,} on", f"/sessions/?{after(LARGE_SESSIONS // 2)}"),
        ("list: last page", "/sessions/?before=end"),
        (
            f"list: loop, row {LARGE_SESSIONS // 10 + 1:,} on",
            f"/sessions/?verdict=loop&{after(LARGE_SESSIONS // 10, verdict='loop')}",
        ),
        ("api: verdict loop", "/api/sessions?verdict=loop"),
        ("overview", "/"),
        (f"session: {LONG_EVENTS:,} events", f"/sessions/{ids['long']}/"),
        ("session: common", f"/sessions/{ids['common']}/"),
        ("session: items 60-260", f"/sessions/{ids['long']}/items?start=60&end=260&profile=default"),
        ("session: items 50,000-50,200", f"/sessions/{ids['long']}/items?start=50000&end=50200&profile=default"),
        (
            "session: text window",
            f"/sessions/{ids['long']}/window?channel=content&start=400000&end=408000&profile=default",
        ),
        ("session: zoom 1%", f"/sessions/{ids['long']}/figure?axis=offset&x0=0&x1=15000&profile=default"),
    ]


def query_count(client, path: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    return len(captured.captured_queries)


def print_row(name: str, who: str, times: tuple[list[float], list[float]], size: int, queries: int) -> None:
    wall, cpu = times
    p90 = statistics.quantiles(wall, n=10)[-1]
    print(
        f"{name:<28} {who:<10} {min(wall):>8.1f} {statistics.median(wall):>10.1f} {statistics.fmean(wall):>10.1f}"
        f" {p90:>10.1f} {statistics.median(cpu):>8.1f} {statistics.fmean(cpu):>8.1f} {size:>6} {queries:>8}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30, help="timed requests per row (default 30)")
    parser.add_argument("--quick", action="store_true", help="10 timed requests per row")
    parser.add_argument("--large", action="store_true", help="100,000 sessions and 10 million events, by COPY")
    parser.add_argument("--rows", default="", help="only the rows whose name starts with this (e.g. 'session')")
    args = parser.parse_args()
    n = 10 if args.quick else args.requests
    admin, url = throwaway_database()
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from loopguard_site.accounts.models import Role
    from loopguard_site.accounts.services import default_project, membership_set
    from loopguard_site.replay.models import Detection
    from loopguard_site.transcripts.models import Session

    try:
        call_command("migrate", verbosity=0)
        setup_test_environment()
        users = get_user_model()
        root = users.objects.create_superuser("bench-root")
        member = users.objects.create_user("bench-member")
        membership_set(user=member, project=default_project(), role=Role.REVIEWER)
        start = time.perf_counter()
        ids = populate_large(root) if args.large else populate(root)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum would soon after such a load
            cursor.execute("SELECT count(*) FROM transcripts_event")
            events = cursor.fetchone()[0]
        print(
            f"data: {Session.objects.count():,} sessions, {events:,} events, {Detection.objects.count():,} detections,"
            f" written in {time.perf_counter() - start:.1f} s; {n} requests a row after {WARMUP} warm-ups"
        )
        print(f"before: calib {calib_ms():.0f} ms, load average {load_average()}")
        print(
            f"{'page':<28} {'user':<10} {'min ms':>8} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10}"
            f" {'cpu med':>8} {'cpu mean':>8} {'KB':>6}"
            f" {'queries':>8}"
        )
        clients = {}
        for who, user in (("superuser", root), ("member", member)):
            clients[who] = Client()
            clients[who].force_login(user)
        if args.large:
            rows = large_rows(ids)
        else:
            rows = [
                ("overview", "/"),
                ("list", "/sessions/"),
                ("list: row 4,951 on (page 100)", f"/sessions/?{after(4_950)}"),
            ]
        for name, path in rows:
            if not name.startswith(args.rows):
                continue
            for who in ("superuser", "member") if name in ("list", "overview") or not args.large else ("member",):
                client = clients[who]
                times = timings(client, path, n)
                print_row(name, who, times, len(client.get(path).content) // 1000, query_count(client, path))
        print(f"after: calib {calib_ms():.0f} ms, load average {load_average()}")
    finally:
        drop_database(admin, url)


if __name__ == "__main__":
    main()
