"""The session list's verdicts, scan states, label status and the filters of
UI_CONTRACT.md (profile, verdict, detector, type, label, created, live):
exact rows from the selector and the page, with a bounded number of queries."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from loopguard_site.errors import FieldError
from loopguard_site.replay.models import Detection, ReplayJob, ReplayRun, SessionVerdict
from loopguard_site.review.models import Label
from loopguard_site.timeline.filters import session_filters
from loopguard_site.timeline.selectors import session_list, session_page, session_row
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def detection(session: Session, profile: str, detector: str, kind: str, start: int) -> Detection:
    return Detection.objects.create(
        session=session, profile=profile, event_seq=1, detector=detector, type=kind, channel="content",
        start=start, end=start + 10, at=start + 10, unit="x", period=1, repeats=10, action="stop", message="m",
    )  # fmt: skip


def verdict(session: Session, profile: str, found: Detection | None) -> SessionVerdict:
    fields = {}
    if found is not None:
        fields = {
            "first_detection_id": found.pk, "first_detection_seq": 1, "first_detection_channel": found.channel,
            "first_detection_detector": found.detector, "first_detection_type": found.type,
            "first_detection_start": found.start, "first_detection_at": found.at,
        }  # fmt: skip
    return SessionVerdict.objects.create(
        session=session, profile=profile, looped=found is not None, detection_count=int(found is not None), **fields
    )


@pytest.fixture
def world(user):
    """Six sessions, one per case:
    - looped: its own profile (default) found a text_loop at 40; labelled true loop
    - clean: default clean, gemini found a loop; labelled clean
    - preview: own profile preview clean, default found a loop (another profile's loop)
    - unscanned: no verdict at all; a scan of it is queued
    - live: a live session, open now
    - legacy: no own profile (stored before scans), seed000 found a loop
    """
    made = {}
    specs = [
        ("looped", "gpt-5", "default", "stored"),
        ("clean", "gpt-5", "default", "stored"),
        ("preview", "gemini-3-pro-preview", "preview", "stored"),
        ("unscanned", "claude", "default", "stored"),
        ("live", "gpt-5", "default", "live"),
        ("legacy", "qwen", "", "closed"),
    ]
    for n, (title, model, profile, state) in enumerate(specs):
        session = session_create_from_events(
            title=title, model=model, source_format="events", parser_version="events/1",
            events=[{"type": "turn"}], state=state, profile=profile,
        )  # fmt: skip
        Session.objects.filter(pk=session.pk).update(created=T0 + timedelta(days=n // 3, minutes=n))
        made[title] = session
    first = detection(made["looped"], "default", "text_loop", "sentence", 40)
    detection(made["looped"], "default", "content_chanting", "chant", 60)
    verdict(made["looped"], "default", first)
    verdict(made["clean"], "default", None)
    verdict(made["clean"], "gemini", detection(made["clean"], "gemini", "content_chanting", "chant", 7))
    verdict(made["preview"], "preview", None)
    verdict(made["preview"], "default", detection(made["preview"], "default", "tool_repetition", "same_call", 3))
    verdict(made["legacy"], "seed000", detection(made["legacy"], "seed000", "reasoning_checkpoint", "type1", 2000))
    job = ReplayJob.objects.create(project=made["unscanned"].project, profiles=["default"], total=1)
    ReplayRun.objects.create(job=job, session=made["unscanned"], profile="default")
    reviewer = get_user_model().objects.create_user("rita")
    Label.objects.create(session=made["looped"], item="text_loop|…", reviewer=reviewer, label="true_loop")
    Label.objects.create(session=made["clean"], item="session", reviewer=reviewer, label="clean")
    Label.objects.create(session=made["clean"], item="x", reviewer=user, label="false_positive")
    return made


def titles(**filters) -> list[str]:
    return sorted(s.title for s in session_list(**filters))


@pytest.mark.django_db
def test_verdict_reads_each_sessions_own_profile_by_default(world):
    assert titles(verdict="loop") == ["legacy", "looped"]
    assert titles(verdict="clean") == ["clean", "preview"]
    assert titles(verdict="unscanned") == ["live", "unscanned"]


@pytest.mark.django_db
def test_verdict_reads_the_profile_asked_for(world):
    assert titles(verdict="loop", profile="default") == ["looped", "preview"]
    assert titles(verdict="clean", profile="default") == ["clean"]
    assert titles(verdict="loop", profile="gemini") == ["clean"]
    assert titles(verdict="unscanned", profile="gemini") == ["legacy", "live", "looped", "preview", "unscanned"]


@pytest.mark.django_db
def test_detector_and_type_filters(world):
    assert titles(detector="content_chanting") == ["looped"]  # the gemini one is not clean's own profile
    assert titles(detector="content_chanting", profile="gemini") == ["clean"]
    assert titles(detector="text_loop", detection_type="sentence") == ["looped"]
    assert titles(detector="text_loop", detection_type="numbered") == []
    assert titles(detection_type="type1") == ["legacy"]


@pytest.mark.django_db
def test_label_filters(world):
    assert titles(label="labelled") == ["clean", "looped"]
    assert titles(label="unlabelled") == ["legacy", "live", "preview", "unscanned"]
    assert titles(label="true_loop") == ["looped"]
    assert titles(label="false_positive") == ["clean"]
    assert titles(label="clean") == ["clean"]
    assert titles(label="missed_loop") == []


@pytest.mark.django_db
def test_created_day_and_live_filters(world):
    assert titles(created=date(2026, 3, 1)) == ["clean", "looped", "preview"]
    assert titles(created=date(2026, 3, 2)) == ["legacy", "live", "unscanned"]
    assert titles(live=True) == ["live"]


@pytest.mark.django_db
def test_each_row_says_its_scan_state_verdicts_and_labels(world):
    rows = {s.title: session_row(s) for s in session_page(session_list(), size=10).sessions}

    assert {title: row.state for title, row in rows.items()} == {
        "looped": "scanned-loop",
        "clean": "scanned-clean",
        "preview": "scanned-clean",
        "unscanned": "scanning",
        "live": "live",
        "legacy": "scanned-loop",
    }
    assert [(v.profile, v.looped) for v in rows["preview"].verdicts] == [("preview", False), ("default", True)]
    assert rows["looped"].labels == ["true_loop"]
    assert rows["clean"].labels == ["false_positive", "clean"]
    assert rows["legacy"].labels == []
    page = session_page(session_list(profile="default"), size=10).sessions
    under_default = {s.title: session_row(s, "default").state for s in page}
    assert under_default["preview"] == "scanned-loop"
    assert under_default["legacy"] == "not scanned"


def test_the_new_parameters_are_read_and_bad_ones_named():
    filters = session_filters({"verdict": "loop", "label": "true_loop", "created": "2026-03-01", "live": "1",
                               "detector": "text_loop", "type": "sentence", "profile": "gemini"})  # fmt: skip
    assert (filters["verdict"], filters["label"], filters["created"], filters["live"]) == (
        "loop", "true_loop", date(2026, 3, 1), True
    )  # fmt: skip
    assert (filters["detector"], filters["detection_type"], filters["profile"]) == ("text_loop", "sentence", "gemini")
    for field, value in [("verdict", "maybe"), ("label", "good"), ("created", "2026-3-1"), ("live", "sometimes")]:
        with pytest.raises(FieldError) as caught:
            session_filters({field: value})
        assert caught.value.field == field


@pytest.fixture
def browser_client(client, user):
    client.force_login(user)
    return client


def body_rows(html: str) -> list[str]:
    return re.findall(r'<tr data-session="\d+"[^>]*>.*?</tr>', html, re.S)


@pytest.mark.django_db
def test_the_page_shows_badges_linking_to_the_first_detection(world, browser_client):
    html = browser_client.get(reverse("timeline:session_list"), {"verdict": "loop"}).content.decode()
    rows = body_rows(html)
    looped = world["looped"]
    first = SessionVerdict.objects.get(session=looped, profile="default").first_detection_id

    assert len(rows) == 2
    assert f'href="{looped.get_absolute_url()}?profile=default#detection-{first}"' in html
    assert "default: loop · sentence · content @40" in html
    assert '<span class="badge badge-loop scan-state">scanned-loop</span>' in rows[1]
    assert "true loop" in rows[1] and "unlabelled" in rows[0]


@pytest.mark.django_db
def test_a_row_being_scanned_is_marked_for_the_page_to_refresh(world, browser_client):
    html = browser_client.get(reverse("timeline:session_list"), {"q": "unscanned"}).content.decode()
    assert f'<tr data-session="{world["unscanned"].pk}" data-pending>' in html
    assert ">scanning<" in html


@pytest.mark.django_db
def test_a_bad_parameter_is_named_on_the_page_and_by_the_api(world, browser_client):
    page = browser_client.get(reverse("timeline:session_list"), {"verdict": "maybe"}).content.decode()
    assert "verdict must be one of loop, clean, unscanned, not &#x27;maybe&#x27;" in page
    answer = browser_client.get(reverse("timeline:api_sessions"), {"label": "good"})
    assert answer.status_code == 400 and answer.json()["field"] == "label"


@pytest.mark.django_db
def test_the_page_costs_the_same_queries_for_few_rows_or_many(user, browser_client, django_assert_max_num_queries):
    def make(n):
        for i in range(n):
            session = session_create_from_events(
                title=f"s{i}", model="m", source_format="events", parser_version="events/1",
                events=[{"type": "turn"}], tags=["t"], profile="default",
            )  # fmt: skip
            verdict(session, "default", detection(session, "default", "text_loop", "sentence", i))

    make(2)
    with django_assert_max_num_queries(20) as few:
        browser_client.get(reverse("timeline:session_list"))
    make(30)
    with django_assert_max_num_queries(len(few.captured_queries)):
        html = browser_client.get(reverse("timeline:session_list")).content.decode()
    assert len(body_rows(html)) == 32


@pytest.mark.django_db
def test_the_sessions_own_profile_is_its_first_badge_outlined(world, browser_client):
    html = browser_client.get(reverse("timeline:session_list"), {"q": "preview"}).content.decode()
    (row,) = body_rows(html)
    badges = re.findall(r'<a class="(badge [^"]*)"[^>]*>([^<]*)</a>', row)
    assert badges == [
        ("badge badge-clean badge-own", "preview: clean"),
        ("badge badge-loop", "default: loop · same_call · content @3"),
    ]
    assert "own first, outlined" in html
