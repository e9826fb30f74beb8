"""The overview dashboard: its aggregates (exact rows), the click-through
URLs of its charts, the projects it reads, its query count and its empty
state."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from loopguard_site.accounts.access import visible_project_ids as scope
from loopguard_site.accounts.models import Project, Role
from loopguard_site.overview import charts, selectors
from loopguard_site.profiles.models import TuningJob
from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_job_create, session_verdict_add
from loopguard_site.review.services import label_detection_set
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.members import member

TODAY = dt.date(2026, 11, 24)


def stored(title: str, model: str, *, day: dt.date = TODAY, state: str = Session.State.STORED, project=None):
    session = session_create_from_events(
        title=title, model=model, source_format="events", parser_version="1", events=[], state=state, project=project
    )
    created = dt.datetime.combine(day, dt.time(13, 5), tzinfo=dt.UTC)
    Session.objects.filter(pk=session.pk).update(created=created)
    return session


def scanned(session: Session, profile: str, *found: tuple[str, str]) -> list[Detection]:
    """Detections (detector, type) stored for the session × profile, and its verdict."""
    rows = [
        Detection.objects.create(
            session=session, profile=profile, event_seq=n + 1, detector=detector, type=kind, channel="content",
            start=100 * n, end=100 * n + 50, at=100 * n + 60, unit="x", period=1, repeats=5, action="stop", message="",
        )
        for n, (detector, kind) in enumerate(found)
    ]  # fmt: skip
    session_verdict_add(session=session, profile=profile, rows=rows)
    return rows


@pytest.fixture
def alice(django_user_model):
    return member(django_user_model.objects.create_user("alice"), Role.REVIEWER)


@pytest.fixture
def browser(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def world(alice, django_user_model):
    """Three models over two days, two profiles, labels, a live session, and
    a session of another project that nobody here may see."""
    bob = member(django_user_model.objects.create_user("bob"), Role.REVIEWER)
    a1, a2 = stored("a1", "qwen3"), stored("a2", "qwen3", day=TODAY - dt.timedelta(days=1))
    b1 = stored("b1", "gpt-4o")
    stored("c1", "")
    stored("live1", "gpt-4o", state=Session.State.LIVE)
    stored("looping1", "qwen3", state=Session.State.LOOPING)
    (d1, d2) = scanned(a1, "default", ("text_loop", "block_cycle"), ("text_loop", "block_cycle"))
    scanned(a1, "preview", ("text_loop", "block_cycle"))
    scanned(a2, "default", ("tool_repetition", "consecutive_identical_tool_calls"))
    scanned(a2, "preview")
    scanned(b1, "default")
    label_detection_set(detection=d1, reviewer=alice, label="false_positive")
    label_detection_set(detection=d1, reviewer=bob, label="true_loop")
    label_detection_set(detection=d2, reviewer=alice, label="false_positive")
    hidden = stored("hidden", "qwen3", project=Project.objects.create(name="other"))
    scanned(hidden, "default", ("text_loop", "block_cycle"))
    return {"a1": a1, "a2": a2, "b1": b1}


@pytest.mark.django_db
def test_sessions_and_verdicts_per_model_are_counted_in_the_visible_projects(world, alice):
    assert selectors.sessions_per_model(scope(alice)) == [
        {"model": "qwen3", "sessions": 3},
        {"model": "gpt-4o", "sessions": 2},
        {"model": "", "sessions": 1},
    ]
    assert selectors.verdicts_per_model(scope(alice)) == [
        {"model": "gpt-4o", "profile": "default", "scanned": 1, "looped": 0, "detections": 0},
        {"model": "qwen3", "profile": "default", "scanned": 2, "looped": 2, "detections": 3},
        {"model": "qwen3", "profile": "preview", "scanned": 2, "looped": 1, "detections": 1},
    ]
    per_model, live_states = selectors.sessions_per_model(scope(alice)), selectors.live_state_counts(scope(alice))
    assert selectors.session_totals(per_model, live_states, scope(alice)) == {"sessions": 6, "live": 2, "labels": 3}


@pytest.mark.django_db
def test_detections_are_counted_per_day_the_session_was_created(world, alice):
    rows = selectors.detections_per_day(scope(alice), TODAY - dt.timedelta(days=29))
    assert rows == [
        {"day": TODAY - dt.timedelta(days=1), "detector": "tool_repetition",
         "type": "consecutive_identical_tool_calls", "detections": 1},
        {"day": TODAY, "detector": "text_loop", "type": "block_cycle", "detections": 3},
    ]  # fmt: skip
    assert selectors.detections_per_day(scope(alice), TODAY) == rows[1:]  # the window starts on its first day


@pytest.mark.django_db
def test_live_states_and_label_progress(world, alice):
    assert selectors.live_state_counts(scope(alice)) == [
        {"state": "live", "sessions": 1},
        {"state": "looping", "sessions": 1},
        {"state": "stalled", "sessions": 0},
    ]
    assert [s.title for s in selectors.live_sessions(scope(alice))] == ["looping1", "live1"]
    assert selectors.label_progress(scope(alice), selectors.verdicts_per_model(scope(alice))) == [
        {"model": "qwen3", "profile": "default", "detections": 3, "labelled": 2, "true_loop": 1, "false_positive": 2},
        {"model": "qwen3", "profile": "preview", "detections": 1, "labelled": 0, "true_loop": 0, "false_positive": 0},
    ]


@pytest.mark.django_db
def test_every_bar_and_point_links_to_the_session_list_filtered_to_it(world, alice):
    models = charts.models_figure(
        selectors.sessions_per_model(scope(alice)), selectors.verdicts_per_model(scope(alice))
    )
    sessions_bar, default_rate, preview_rate = models["data"]
    assert sessions_bar["customdata"] == ["/sessions/?model=qwen3", "/sessions/?model=gpt-4o", "/sessions/"]
    assert (default_rate["y"], default_rate["x"]) == (["qwen3", "gpt-4o"], [100.0, 0.0])
    assert default_rate["customdata"] == [
        "/sessions/?model=qwen3&profile=default&verdict=loop",
        "/sessions/?model=gpt-4o&profile=default&verdict=loop",
    ]
    assert (preview_rate["x"], preview_rate["customdata"]) == (
        [50.0],
        ["/sessions/?model=qwen3&profile=preview&verdict=loop"],
    )
    first_day = TODAY - dt.timedelta(days=29)
    per_day = charts.detections_figure(selectors.detections_per_day(scope(alice), first_day), first_day, TODAY)
    assert [(t["name"], t["x"], t["y"], t["customdata"]) for t in per_day["data"]] == [
        ("tool_repetition · consecutive_identical_tool_calls", ["2026-11-23"], [1],
         ["/sessions/?created=2026-11-23&detector=tool_repetition&type=consecutive_identical_tool_calls"]),
        ("text_loop · block_cycle", ["2026-11-24"], [3],
         ["/sessions/?created=2026-11-24&detector=text_loop&type=block_cycle"]),
    ]  # fmt: skip
    live = charts.live_figure(selectors.live_state_counts(scope(alice)))["data"][0]
    assert live["customdata"] == [f"/sessions/?live=1&state={state}" for state in ("live", "looping", "stalled")]
    labelled, false_positives = charts.labels_figure(
        selectors.label_progress(scope(alice), selectors.verdicts_per_model(scope(alice)))
    )["data"]
    assert (labelled["x"], false_positives["x"]) == ([66.7, 0.0], [66.7, None])
    assert labelled["customdata"][0] == "/sessions/?model=qwen3&profile=default&label=unlabelled"
    assert false_positives["customdata"][1] == "/sessions/?model=qwen3&profile=preview&label=false_positive"


def test_names_in_the_charts_are_escaped_for_plotly_markup():
    figure = charts.models_figure([{"model": "<b onmouseover=x>m</b>", "sessions": 1}], [])
    assert figure["data"][0]["y"] == ["&lt;b onmouseover=x&gt;m&lt;/b&gt;"]
    assert figure["data"][0]["customdata"] == ["/sessions/?model=%3Cb+onmouseover%3Dx%3Em%3C%2Fb%3E"]


@pytest.mark.django_db
def test_the_page_draws_every_chart_with_its_table_and_the_recent_jobs(world, alice, browser):
    replay = replay_job_create(user=alice, profiles=["default"], session_ids=[world["a1"].pk])
    tuning = TuningJob.objects.create(project=replay.project, model_glob="qwen3*", base_profile="default")

    answer = browser.get("/")

    page = answer.content.decode()
    assert answer.status_code == 200
    plots = json.loads(page.split('<script id="overview-plots" type="application/json">')[1].split("</script>")[0])
    assert sorted(plots) == ["detections", "labels", "live", "models"]
    for name in ("models", "live", "labels"):  # detections: sessions created in the test's past days
        assert f'data-plot="{name}"' in page
    assert '<a href="/sessions/?model=qwen3&amp;profile=preview&amp;verdict=loop">qwen3 · preview: looped</a>' in page
    assert f'<a href="/replays/{replay.pk}">#{replay.pk}</a>' in page
    assert f'<a href="/profiles/tuning/{tuning.pk}">#{tuning.pk}</a>' in page
    assert f"<td>{timezone.localtime(replay.created):%Y-%m-%d %H:%M}</td>" in page
    assert '<a href="/live/' in page and '<span class="badge badge-loop">looping</span>' in page
    assert '<a href="/" aria-current="page">Overview</a>' in page


@pytest.mark.django_db
def test_the_query_count_does_not_grow_with_the_data(alice, browser):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert browser.get("/").status_code == 200
        return len(captured)

    session = stored("s0", "m0")
    scanned(session, "default", ("text_loop", "block_cycle"))
    few = queries()
    for n in range(1, 15):
        session = stored(f"s{n}", f"m{n % 4}", state=Session.State.LIVE if n % 3 else Session.State.STORED)
        scanned(session, "default", *[("text_loop", "block_cycle")] * n)
        scanned(session, "preview")
    assert queries() == few


@pytest.mark.django_db
def test_a_fresh_project_gets_an_empty_state_that_says_how_to_start(browser):
    page = browser.get("/").content.decode()
    assert 'id="overview-empty"' in page and "No sessions yet" in page
    assert '<a class="btn btn-primary" href="/upload/">Upload transcripts</a>' in page
    assert "data-plot=" not in page


@pytest.mark.django_db
def test_a_visitor_is_sent_to_log_in_and_back_to_the_overview_after():
    answer = Client().get("/")
    assert (answer.status_code, answer["Location"]) == (302, "/accounts/login/?next=/")


@pytest.mark.embedded
@pytest.mark.django_db
def test_the_aggregates_run_on_sqlite_too(world, alice, browser):
    assert selectors.verdicts_per_model(scope(alice))[1]["looped"] == 2
    assert [row["detections"] for row in selectors.detections_per_day(scope(alice), TODAY - dt.timedelta(days=29))] == [
        1,
        3,
    ]
    assert selectors.label_progress(scope(alice), selectors.verdicts_per_model(scope(alice)))[0]["labelled"] == 2
    assert browser.get("/").status_code == 200
