"""The replay calls of the JSON API (api.md): shapes and errors."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from loopguard_site.replay.models import Detection, ReplayJob
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute, replay_session

from .conftest import scan_count, scan_json, store_demo

TOOLS = "loop-tools-readmediafile.jsonl"


def post(client: Client, path: str, body: object):
    return client.post(path, data=json.dumps(body), content_type="application/json")


@pytest.mark.django_db
def test_it_creates_a_job_and_answers_202_with_its_id_and_state(api, user):
    session = store_demo(TOOLS)

    answer = post(api, "/api/replays", {"sessions": [session.pk], "profiles": ["default", "gemini"]})

    job = ReplayJob.objects.get()
    assert (answer.status_code, answer.json()) == (202, {"id": job.pk, "state": "queued"})
    assert (job.created_by, job.total) == (user, 2)


@pytest.mark.django_db
def test_it_creates_a_job_over_all_sessions_matching_a_filter(api):
    store_demo(TOOLS, tags=("x",))
    store_demo(TOOLS)

    answer = post(api, "/api/replays", {"all": True, "filter": {"tag": "x"}, "profiles": ["default"]})

    assert answer.status_code == 202
    assert ReplayJob.objects.get().total == 1


@pytest.mark.parametrize(
    ("body", "field", "error"),
    [
        ({"sessions": "SESSION", "profiles": ["nope"]}, "profiles",
         "unknown profile 'nope' (known: default, seed000, gemini, preview)"),
        ({"sessions": "SESSION"}, "profiles", '"profiles" must be a non-empty list of profile names'),
        ({"all": "yes", "profiles": ["default"]}, "all", '"all" must be true or false'),
        ({"sessions": [0], "profiles": ["default"]}, "sessions", "no session with id 0"),
    ],
)  # fmt: skip
@pytest.mark.django_db
def test_it_refuses_a_bad_request_naming_the_field(api, body, field, error):
    session = store_demo(TOOLS)
    if body.get("sessions") == "SESSION":
        body = {**body, "sessions": [session.pk]}

    answer = post(api, "/api/replays", body)

    assert (answer.status_code, answer.json()) == (400, {"error": error, "field": field, "line": None})
    assert ReplayJob.objects.count() == 0


@pytest.mark.django_db
def test_it_refuses_a_body_that_is_not_json(api):
    answer = api.post("/api/replays", data=b"{nope", content_type="application/json")
    assert (answer.status_code, answer.json()["field"], answer.json()["line"]) == (400, None, 1)


@pytest.mark.django_db
def test_it_answers_a_jobs_counters_and_cancels_it(api, user):
    first, second = store_demo(TOOLS), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[first.pk, second.pk])
    replay_job_session_execute(job_id=job.pk, session_id=first.pk, claim="t1")

    detail = api.get(f"/api/replays/{job.pk}")
    cancelled = api.post(f"/api/replays/{job.pk}/cancel")
    after = api.get(f"/api/replays/{job.pk}")

    assert (detail.status_code, detail.json()) == (
        200, {"id": job.pk, "state": "running", "done": 1, "failed": 0, "total": 2}
    )  # fmt: skip
    assert (cancelled.status_code, cancelled.json()) == (200, {"id": job.pk, "state": "cancelled"})
    assert after.json() == {"id": job.pk, "state": "cancelled", "done": 1, "failed": 0, "total": 2}


@pytest.mark.parametrize(("method", "path"), [("get", "/api/replays/999999"), ("post", "/api/replays/999999/cancel")])
@pytest.mark.django_db
def test_it_answers_404_for_an_unknown_job(api, method, path):
    answer = getattr(api, method)(path)
    assert (answer.status_code, answer.json()) == (
        404,
        {"error": "no replay with id 999999", "field": None, "line": None},
    )


@pytest.mark.django_db
def test_it_lists_a_sessions_detections_with_id_and_profile(api):
    session = store_demo(TOOLS)
    replay_session(session=session, profile_name="default")
    replay_session(session=session, profile_name="gemini")
    replay_session(session=session, profile_name="preview")

    everything = api.get(f"/api/sessions/{session.pk}/detections").json()["detections"]
    default = api.get(f"/api/sessions/{session.pk}/detections?profile=default").json()["detections"]

    found = scan_count(TOOLS, "default")
    assert [d["profile"] for d in everything] == ["default"] * found + ["preview"] * found
    assert default == [d for d in everything if d["profile"] == "default"]
    assert [{k: v for k, v in d.items() if k not in ("id", "profile")} for d in default] == scan_json(TOOLS, "default")[
        "detections"
    ]
    assert sorted(d["id"] for d in default) == sorted(
        Detection.objects.filter(session=session, profile="default").values_list("id", flat=True)
    )


@pytest.mark.django_db
def test_it_answers_404_for_the_detections_of_an_unknown_session(api):
    answer = api.get("/api/sessions/999999/detections")
    assert (answer.status_code, answer.json()["error"]) == (404, "no session with id 999999")


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/api/replays"), ("get", "/api/replays/1"), ("post", "/api/replays/1/cancel"),
     ("get", "/api/sessions/1/detections")],
)  # fmt: skip
@pytest.mark.django_db
def test_it_refuses_a_call_without_a_token(method, path):
    answer = getattr(Client(), method)(path)
    assert answer.status_code == 401


@pytest.mark.parametrize(("method", "path"), [("get", "/api/replays"), ("post", "/api/replays/1")])
@pytest.mark.django_db
def test_it_refuses_the_wrong_method(api, method, path):
    assert getattr(api, method)(path).status_code == 405
