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
median, mean and 90th percentile in milliseconds, for a superuser (every
project) and for a member of the one project (the project filter). Before
and after the table: `calib`, a fixed 3-million-step Python loop, and the
load average, to say how busy the machine was.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/loopguard .venv/bin/python bench/lab_pages.py

(`--requests N` for N timed requests a row, `--quick` for 10).
"""

from __future__ import annotations

import argparse
import datetime as dt
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


def calib_ms() -> float:
    """A fixed 3-million-step Python loop, timed: how busy the machine is."""
    start = time.perf_counter()
    total = 0
    for step in range(3_000_000):
        total += step
    return (time.perf_counter() - start) * 1000


def load_average() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def timings(client, path: str, n: int) -> list[float]:
    for _ in range(WARMUP):
        assert client.get(path).status_code == 200, path
    times = []
    for _ in range(n):
        start = time.perf_counter()
        answer = client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, path
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30, help="timed requests per row (default 30)")
    parser.add_argument("--quick", action="store_true", help="10 timed requests per row")
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
        populate(root)
        print(
            f"data: {Session.objects.count():,} sessions, {Detection.objects.count():,} detections, "
            f"written in {time.perf_counter() - start:.1f} s; {n} requests a row after {WARMUP} warm-ups"
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum would soon after such a load
        print(f"before: calib {calib_ms():.0f} ms, load average {load_average()}")
        print(f"{'page':<24} {'user':<10} {'median ms':>10} {'mean ms':>10} {'p90 ms':>10} {'KB':>6}")
        for who, user in (("superuser", root), ("member", member)):
            client = Client()
            client.force_login(user)
            for path in ("/", "/sessions/", "/sessions/?page=100"):
                times = timings(client, path, n)
                size = len(client.get(path).content) // 1000
                p90 = statistics.quantiles(times, n=10)[-1]
                print(
                    f"{path:<24} {who:<10} {statistics.median(times):>10.1f} {statistics.fmean(times):>10.1f} "
                    f"{p90:>10.1f} {size:>6}",
                    flush=True,
                )
        print(f"after: calib {calib_ms():.0f} ms, load average {load_average()}")
    finally:
        drop_database(admin, url)


if __name__ == "__main__":
    main()
