"""The dashboard's rows (`GET /api/live/sessions`) and the two live pages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from loopguard_site.live.services import live_ingest
from loopguard_site.timeline.charts import timeline_figure
from loopguard_site.timeline.selectors import session_checkpoint_rows, session_detection_rows, session_streams
from loopguard_site.transcripts.services import session_create_from_events, session_create_live

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_it_lists_live_sessions_with_state_last_event_and_first_detection(producer, loop_events, loop_stop):
    session_create_from_events(title="upload", model="m", source_format="events", parser_version="1", events=[])
    with time_machine.travel(T0, tick=False) as clock:
        quiet = session_create_live(model="gpt-4o", title="<b>quiet</b>", uploader=producer.user)
        clock.shift(5)
        looping = session_create_live(model="Qwen1.5-1.8B-Chat", uploader=producer.user)
        clock.shift(5)
        live_ingest(session_id=looping.pk, seq=1, events=loop_events[: loop_stop.seq + 10])

    rows = producer.client().get("/api/live/sessions").json()["results"]

    assert rows == [
        {
            "id": looping.pk,
            "title": "live Qwen1.5-1.8B-Chat",
            "model": "Qwen1.5-1.8B-Chat",
            "state": "stopped",
            "events": loop_stop.seq + 10,
            "last_event": "2026-11-22T12:00:10+00:00",
            "first_detection": {key: loop_stop.detection[key] for key in ("type", "action", "message")},
        },
        {
            "id": quiet.pk,
            "title": "<b>quiet</b>",
            "model": "gpt-4o",
            "state": "live",
            "events": 0,
            "last_event": None,
            "first_detection": None,
        },
    ]


def test_the_pages_need_a_login_and_show_the_session(client, producer, live_session):
    anonymous = client.get(f"/live/{live_session.pk}")
    client.force_login(producer.user)
    page = client.get(f"/live/{live_session.pk}")
    missing = client.get(f"/live/{live_session.pk + 1000}")
    dashboard = client.get("/live/")

    assert (anonymous.status_code, anonymous.url.split("?")[0]) == (302, "/accounts/login/")
    assert (page.status_code, missing.status_code, dashboard.status_code) == (200, 404, 200)
    assert f'data-ws-path="/ws/sessions/{live_session.pk}"' in page.content.decode()
    assert 'data-api-url="/api/live/sessions"' in dashboard.content.decode()


def test_the_timeline_is_the_session_pages_figure_of_the_stream_so_far(client, producer, live_session, loop_events):
    live_ingest(session_id=live_session.pk, seq=1, events=loop_events)
    client.force_login(producer.user)

    figure = client.get(f"/live/{live_session.pk}/timeline").json()

    detections = session_detection_rows(session_id=live_session.pk, profile="default")
    checkpoints = session_checkpoint_rows(session_id=live_session.pk, profile="default")
    assert figure == timeline_figure(session_streams(live_session), detections, checkpoints, axis="offset")
    marked = [data[1] for trace in figure["data"] for data in trace.get("customdata", ()) if data[0] == "detection"]
    assert marked == [d["id"] for d in detections] and len(marked) >= 1
