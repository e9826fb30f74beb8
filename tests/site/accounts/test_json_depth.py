"""LOOPGUARD_MAX_JSON_DEPTH (64): JSON nested up to it is imported, replayed
and drawn; one level more is refused by import, live ingest and the JSON API
before it is parsed, naming where."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_live
from tests.members import member, project_token

LIMIT = 64


def call(depth: int) -> dict:
    """A tool call that, as a line of its own, nests `depth` levels."""
    args: dict = {}
    for _ in range(depth - 2):
        args = {"a": args}
    return {"type": "tool_call", "name": "search", "args": args}


def failing(depth: int) -> list[dict]:
    """The same deep call failing five times: a tool loop the replay finds."""
    pair = [call(depth), {"type": "tool_result", "ok": False, "output": "timeout"}]
    return [{"type": "turn"}, *pair * 5]


def body(events: list[dict]) -> bytes:
    return "".join(json.dumps(event) + "\n" for event in events).encode()


@pytest.fixture
def api(django_user_model) -> Client:
    user = member(django_user_model.objects.create_user("deep"))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {project_token(user=user)[1]}")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_file_at_the_limit_imports_replays_and_draws(api):
    response = api.post("/api/sessions?format=events", body(failing(LIMIT)), content_type="application/x-ndjson")
    assert response.status_code == 201, response.content
    session = Session.objects.get(pk=json.loads(response.content)["sessions"][0]["id"])

    summary = replay_session(session=session, profile_name="default")

    assert summary.detection_count >= 1
    assert Detection.objects.filter(session=session, channel="tools").exists()
    page = api.get(reverse("timeline:session_detail", args=[session.pk]))
    figure = api.get(reverse("timeline:session_figure", args=[session.pk]), {"x0": 0, "x1": 20, "profile": "default"})
    assert (page.status_code, figure.status_code) == (200, 200)
    assert "search" in json.dumps(json.loads(figure.content)["figure"])


@pytest.mark.django_db
def test_a_file_one_level_past_the_limit_is_refused_naming_the_line(api):
    events = failing(LIMIT)
    events[3] = call(LIMIT + 1)
    response = api.post(
        "/api/sessions?format=events&filename=deep.jsonl", body(events), content_type="application/x-ndjson"
    )
    assert response.status_code == 400
    assert json.loads(response.content)["errors"] == [
        {
            "file": "deep.jsonl",
            "line": 4,
            "field": None,
            "message": f"JSON nested deeper than {LIMIT} levels at args" + ".a" * (LIMIT - 1)
            + " (LOOPGUARD_MAX_JSON_DEPTH)",
        }
    ]  # fmt: skip
    assert not Session.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("depth", "status"), [(LIMIT, 200), (LIMIT + 1, 400)])
def test_live_ingest_over_http_takes_the_limit_and_refuses_one_more(api, django_user_model, depth, status):
    session = session_create_live(model="m", uploader=django_user_model.objects.get(username="deep"))
    message = {"seq": 1, "event": call(depth - 1)}  # the message is one level around the event
    response = api.post(f"/api/sessions/{session.pk}/events", json.dumps(message), content_type="application/json")
    assert response.status_code == status, response.content
    if status == 400:
        assert json.loads(response.content) == {
            "error": f"JSON nested deeper than {LIMIT} levels at event.args" + ".a" * (LIMIT - 2)
            + " (LOOPGUARD_MAX_JSON_DEPTH)",
            "field": "event.args" + ".a" * (LIMIT - 2),
            "line": 1,
        }  # fmt: skip
