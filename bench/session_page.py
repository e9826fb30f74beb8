"""Session page cost for large sessions: server time to lay out the events,
build the timeline figure and render the page, page and figure sizes, one
on-demand text window and one zoom (the first 1% of the x axis), for agent sessions of 1,000 to 100,000 events
(turn, two reasoning deltas of 20 characters, a tool call: 100,000 events
are about 1 MB of text) replayed through the `default` profile, which flags
nearly every tool call (tens of thousands of detections at the top size).
Sessions, their results and the bench user are deleted afterwards.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/loopguard .venv/bin/python bench/session_page.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from loopguard_site.replay.services import replay_session  # noqa: E402
from loopguard_site.timeline.charts import timeline_figure  # noqa: E402
from loopguard_site.timeline.selectors import session_checkpoint_rows, session_detection_rows, session_streams  # noqa: E402
from loopguard_site.transcripts.models import Session  # noqa: E402
from loopguard_site.transcripts.services import session_create_from_events  # noqa: E402

SIZES = (1_000, 10_000, 100_000)


def agent_events(count: int) -> list[dict]:
    events = []
    for n in range(count // 4):
        events += [
            {"type": "turn"},
            {"type": "reasoning", "text": f"Step {n:06d}: look.\n"},
            {"type": "reasoning", "text": "Check the file again"},
            {"type": "tool_call", "name": "read_file", "args": {"path": f"f{n % 3}.txt"}},
        ]
    return events


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def main() -> None:
    call_command("migrate", verbosity=0)
    setup_test_environment()
    user, _ = get_user_model().objects.get_or_create(username="bench-session-page")
    client = Client()
    client.force_login(user)
    print(f"database: {connection.vendor}")
    header = (
        "events", "text KB", "detections", "streams s", "figure s", "figure KB",
        "page s", "page KB", "window s", "zoom s",
    )  # fmt: skip
    print(" ".join(f"{h:>10}" for h in header))
    try:
        for size in SIZES:
            events = agent_events(size)
            session = session_create_from_events(
                title=f"bench {size}", model="", source_format="events", parser_version="bench", events=events
            )
            replay_session(session=session, profile_name="default")
            streams, streams_s = timed(lambda s=session: session_streams(s))
            detections = session_detection_rows(session_id=session.pk, profile="default")
            checkpoints = session_checkpoint_rows(session_id=session.pk, profile="default")
            figure, figure_s = timed(partial(timeline_figure, streams, detections, checkpoints))
            page, page_s = timed(lambda s=session: client.get(f"/sessions/{s.pk}/?profile=default"))
            middle = len(streams.texts["reasoning"]) // 2
            query = {"channel": "reasoning", "start": middle, "end": middle + 8000, "profile": "default"}
            window, window_s = timed(partial(client.get, f"/sessions/{session.pk}/window", query))
            zoom_query = {"axis": "offset", "x0": 0, "x1": streams.length / 100, "profile": "default"}
            zoom, zoom_s = timed(partial(client.get, f"/sessions/{session.pk}/figure", zoom_query))
            assert page.status_code == 200 and window.status_code == 200 and zoom.status_code == 200
            row = (
                f"{size:>10,}", f"{len(streams.texts['reasoning']) // 1000:>10,}", f"{len(detections):>10,}",
                f"{streams_s:>10.2f}", f"{figure_s:>10.2f}", f"{len(json.dumps(figure)) // 1000:>10,}",
                f"{page_s:>10.2f}", f"{len(page.content) // 1000:>10,}", f"{window_s:>10.2f}", f"{zoom_s:>10.2f}",
            )  # fmt: skip
            print(" ".join(row), flush=True)
            Session.objects.filter(pk=session.pk).delete()
    finally:
        user.delete()


if __name__ == "__main__":
    main()
