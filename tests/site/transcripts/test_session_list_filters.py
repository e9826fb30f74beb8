"""The session list's filters, search, sort and pages: the selector, the
home page and GET /api/sessions give exactly the expected rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.timeline import api_views
from loopguard_site.timeline.selectors import session_list
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def client(client, user):
    """The home page needs a login (issue 9): alice's browser."""
    client.force_login(user)
    return client


# title, model, format, tags, state, events, detections
ROWS = [
    ("Alpha loop", "gpt-5", "openai", ["prod", "loop"], "stored", 3, 2),
    ("Beta chat", "claude-sonnet-4-5", "anthropic", ["prod"], "stored", 10, 0),
    ("Gamma agent", "gpt-5", "codex", ["agents"], "closed", 1, 1),
    ("Delta live", "gemini-3-pro-preview", "events", [], "live", 0, 0),
]


@pytest.fixture
def sessions() -> dict[str, Session]:
    made = {}
    for n, (title, model, fmt, tags, state, events, detections) in enumerate(ROWS):
        session = session_create_from_events(
            title=title,
            model=model,
            source_format=fmt,
            parser_version=f"{fmt}/1",
            events=[{"type": "turn"}] * events,
            tags=tags,
            state=state,
        )
        Session.objects.filter(pk=session.pk).update(created=T0 + timedelta(minutes=n))
        for _ in range(detections):
            Detection.objects.create(
                session=session, profile="default", event_seq=1, detector="d", type="t", channel="content",
                start=0, end=1, at=1, unit="x", period=1, repeats=2, action="warn", message="m",
            )  # fmt: skip
        made[title] = session
    return made


def titles(**filters) -> list[str]:
    return [s.title for s in session_list(**filters)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, ["Delta live", "Gamma agent", "Beta chat", "Alpha loop"]),
        ({"model": "gpt-5"}, ["Gamma agent", "Alpha loop"]),
        ({"model": "gpt"}, []),
        ({"source_format": "anthropic"}, ["Beta chat"]),
        ({"tag": "prod"}, ["Beta chat", "Alpha loop"]),
        ({"tag": "pro"}, []),
        ({"state": "live"}, ["Delta live"]),
        ({"has_detections": True}, ["Gamma agent", "Alpha loop"]),
        ({"has_detections": False}, ["Delta live", "Beta chat"]),
        ({"q": "LOOP"}, ["Alpha loop"]),  # title, and the tag "loop"
        ({"q": "claude"}, ["Beta chat"]),  # model
        ({"q": "agent"}, ["Gamma agent"]),  # title and tag "agents": listed once
        ({"q": "prod", "model": "gpt-5"}, ["Alpha loop"]),
        ({"tag": "prod", "has_detections": True, "source_format": "openai", "state": "stored"}, ["Alpha loop"]),
        ({"sort": "created"}, ["Alpha loop", "Beta chat", "Gamma agent", "Delta live"]),
        ({"sort": "title"}, ["Alpha loop", "Beta chat", "Delta live", "Gamma agent"]),
        ({"sort": "-title"}, ["Gamma agent", "Delta live", "Beta chat", "Alpha loop"]),
        ({"sort": "-events"}, ["Beta chat", "Alpha loop", "Gamma agent", "Delta live"]),
        ({"sort": "model"}, ["Beta chat", "Delta live", "Alpha loop", "Gamma agent"]),
        ({"sort": "-model"}, ["Gamma agent", "Alpha loop", "Delta live", "Beta chat"]),
    ],
)
def test_selector_rows(sessions, filters, expected):
    assert titles(**filters) == expected


@pytest.mark.django_db
def test_api_list_filters_and_answers_each_session(api, sessions):
    response = api.get("/api/sessions?model=gpt-5&has_detections=true&sort=created")

    alpha = sessions["Alpha loop"]
    assert response.status_code == 200
    body = response.json()
    assert [r["title"] for r in body["results"]] == ["Alpha loop", "Gamma agent"]
    assert body["next"] is None
    assert body["results"][0] == {
        "id": alpha.pk,
        "title": "Alpha loop",
        "model": "gpt-5",
        "format": "openai",
        "state": "stored",
        "events": 3,
        "created": "2026-01-01T00:00:00+00:00",
        "parser_version": "openai/1",
        "tags": ["loop", "prod"],
        "profile": "",
        "verdicts": [],
    }


@pytest.mark.django_db
def test_api_list_pages_with_a_next_url_keeping_the_filters(api, sessions, monkeypatch):
    monkeypatch.setattr(api_views, "PAGE_SIZE", 1)

    first = api.get("/api/sessions?tag=prod").json()
    second = api.get(first["next"]).json()
    beyond = api.get(f"/api/sessions?tag=prod&after={quote(T0.isoformat())},{sessions['Alpha loop'].pk}").json()

    assert [r["title"] for r in first["results"]] == ["Beta chat"]
    beta = sessions["Beta chat"]
    assert (
        first["next"] == f"http://testserver/api/sessions?tag=prod&after=2026-01-01T00%3A01%3A00%2B00%3A00%2C{beta.pk}"
    )
    assert ([r["title"] for r in second["results"]], second["next"]) == (["Alpha loop"], None)
    assert beyond == {"results": [], "next": None}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"), [("has_detections=maybe", "has_detections"), ("sort=size", "sort"), ("after=0", "after")]
)
def test_api_list_refuses_bad_parameters(api, query, field):
    response = api.get(f"/api/sessions?{query}")

    assert (response.status_code, response.json()["field"]) == (400, field)


@pytest.mark.django_db
def test_home_page_filters_sorts_and_keeps_filters_in_page_links(client, sessions, monkeypatch):
    from loopguard_site.timeline import views

    monkeypatch.setattr(views, "PAGE_SIZE", 1)

    response = client.get("/sessions/?q=a&sort=events&tag=prod")

    assert [s.title for s in response.context["page"].sessions] == ["Alpha loop"]
    body = response.content.decode()
    alpha = response.context["page"].sessions[0]
    assert f'rel="next" href="?q=a&amp;sort=events&amp;tag=prod&amp;after={alpha.event_count}%2C{alpha.pk}"' in body
    assert '<option value="prod" selected>prod</option>' in body
    second = client.get(f"/sessions/?q=a&sort=events&tag=prod&after={alpha.event_count},{alpha.pk}")
    assert [s.title for s in second.context["page"].sessions] == ["Beta chat"]


@pytest.mark.django_db
def test_home_page_shows_a_bad_filter_and_lists_everything(client, sessions):
    response = client.get("/sessions/?has_detections=maybe")

    assert response.context["filter_error"] == "has_detections must be true or false, not 'maybe'"
    assert len(response.context["page"].sessions) == 4


@pytest.mark.django_db
def test_home_page_says_when_nothing_matches(client, sessions):
    body = client.get("/sessions/?q=nothing-like-this").content.decode()

    assert "No sessions match these filters." in body
