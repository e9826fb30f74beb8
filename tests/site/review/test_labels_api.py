"""POST /api/detections/<id>/labels, POST /api/sessions/<id>/labels and
POST /api/adjudications: shapes, relabelling, validation and errors."""

from __future__ import annotations

import pytest
from django.test import Client

from loopguard_site.replay.services import replay_session
from loopguard_site.review.models import Adjudication, Label
from loopguard_site.review.selectors import agreement_rows, disagreements, session_truths
from loopguard_site.transcripts.models import Session

from .conftest import REASONING_LOOP, TOOLS_LOOP, replayed, token_client


@pytest.mark.django_db
def test_it_stores_a_detection_label_with_who_and_when_and_relabelling_replaces_it(ann):
    session = replayed(REASONING_LOOP)
    (detection,) = session.detections.all()
    api = token_client(ann)

    first = api.post(f"/api/detections/{detection.pk}/labels", {"label": "true_loop"}, content_type="application/json")
    again = api.post(
        f"/api/detections/{detection.pk}/labels",
        {"label": "false_positive", "note": "a <b>list</b>"},
        content_type="application/json",
    )

    assert first.status_code == 201 and again.status_code == 201
    body = again.json()
    assert {k: body[k] for k in ("session", "item", "label", "note", "reviewer", "detection")} == {
        "session": session.pk,
        "item": "text_loop|short_unit|reasoning|1654|2510|2510",
        "label": "false_positive",
        "note": "a <b>list</b>",
        "reviewer": "ann",
        "detection": detection.pk,
    }
    assert body["id"] == first.json()["id"]
    (label,) = Label.objects.all()
    assert (label.reviewer, label.label, label.detector, label.start, label.at) == (
        ann,
        "false_positive",
        "text_loop",
        1654,
        2510,
    )
    assert label.updated >= label.created


@pytest.mark.django_db
def test_a_label_survives_a_re_run_of_the_replay_that_replaced_its_detection(ann):
    session = replayed(REASONING_LOOP)
    (detection,) = session.detections.all()
    token_client(ann).post(
        f"/api/detections/{detection.pk}/labels", {"label": "true_loop"}, content_type="application/json"
    )
    replay_session(session=session, profile_name="default")  # replaces the detection rows
    (label,) = Label.objects.all()
    assert label.detection is None and label.item == "text_loop|short_unit|reasoning|1654|2510|2510"
    assert session_truths([session.pk])[session.pk].label == "loop"


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"label": "loop"}, 400, {"field": "label"}),
        ({}, 400, {"field": "label"}),
        ({"label": "true_loop", "note": 5}, 400, {"field": "note"}),
    ],
)
@pytest.mark.django_db
def test_it_refuses_a_bad_detection_label(ann, body, status, error):
    (detection,) = replayed(REASONING_LOOP).detections.all()
    answer = token_client(ann).post(f"/api/detections/{detection.pk}/labels", body, content_type="application/json")
    assert answer.status_code == status
    assert {k: answer.json()[k] for k in error} == error
    assert not Label.objects.exists()


@pytest.mark.django_db
def test_it_answers_404_for_an_unknown_detection_or_session_and_401_without_a_token(ann):
    api = token_client(ann)
    assert api.post(
        "/api/detections/999999/labels", {"label": "true_loop"}, content_type="application/json"
    ).json() == {"error": "no detection with id 999999", "field": None, "line": None}
    assert (
        api.post("/api/sessions/999999/labels", {"label": "clean"}, content_type="application/json").status_code == 404
    )
    assert (
        Client().post("/api/sessions/1/labels", {"label": "clean"}, content_type="application/json").status_code == 401
    )


@pytest.mark.django_db
def test_it_stores_a_missed_loop_span_within_the_channel(ann):
    session = replayed(REASONING_LOOP)
    answer = token_client(ann).post(
        f"/api/sessions/{session.pk}/labels",
        {"label": "missed_loop", "channel": "reasoning", "start": 100, "end": 4449},
        content_type="application/json",
    )
    assert answer.status_code == 201
    body = answer.json()
    assert {k: body[k] for k in ("item", "label", "channel", "start", "end", "reviewer")} == {
        "item": "session",
        "label": "missed_loop",
        "channel": "reasoning",
        "start": 100,
        "end": 4449,
        "reviewer": "ann",
    }
    assert session_truths([session.pk])[session.pk].loop_starts == {"reasoning": 100}


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"label": "missed_loop", "channel": "reasoning", "start": 100, "end": 4450}, "end",
         '"end" 4450 is past the end of the reasoning channel (4449)'),
        ({"label": "missed_loop", "channel": "content", "start": 0, "end": 1}, "end",
         '"end" 1 is past the end of the content channel (0)'),
        ({"label": "missed_loop", "channel": "reasoning", "start": 10, "end": 10}, "start",
         '"start" must be at least 0 and below "end"'),
        ({"label": "missed_loop", "channel": "reasoning", "start": -1, "end": 10}, "start",
         '"start" must be at least 0 and below "end"'),
        ({"label": "missed_loop", "channel": "reasoning", "start": "1", "end": 10}, "start",
         '"start" must be a whole number'),
        ({"label": "missed_loop", "channel": "audio", "start": 1, "end": 10}, "channel",
         '"channel" must be one of reasoning, content, tools, not \'audio\''),
        ({"label": "true_loop"}, "label", '"label" must be one of missed_loop, clean, not \'true_loop\''),
    ],
)  # fmt: skip
@pytest.mark.django_db
def test_it_refuses_a_bad_session_label(ann, body, field, message):
    session = replayed(REASONING_LOOP)
    answer = token_client(ann).post(f"/api/sessions/{session.pk}/labels", body, content_type="application/json")
    assert (answer.status_code, answer.json()) == (400, {"error": message, "field": field, "line": None})


@pytest.mark.django_db
def test_a_tools_missed_loop_counts_tool_calls(ann):
    session = replayed(TOOLS_LOOP)
    api = token_client(ann)
    ok = {"label": "missed_loop", "channel": "tools", "start": 0, "end": 4}
    assert api.post(f"/api/sessions/{session.pk}/labels", ok, content_type="application/json").status_code == 201
    past = {**ok, "end": 5}
    assert (
        api.post(f"/api/sessions/{session.pk}/labels", past, content_type="application/json").json()["field"] == "end"
    )


@pytest.mark.django_db
def test_a_clean_label_replaces_the_reviewers_missed_loop(ann):
    session = replayed(REASONING_LOOP)
    api = token_client(ann)
    span = {"label": "missed_loop", "channel": "reasoning", "start": 1, "end": 2}
    api.post(f"/api/sessions/{session.pk}/labels", span, content_type="application/json")
    answer = api.post(f"/api/sessions/{session.pk}/labels", {"label": "clean"}, content_type="application/json")
    assert answer.status_code == 201
    assert list(Label.objects.values_list("label", "channel", "start", "end")) == [("clean", "", None, None)]


@pytest.mark.django_db
def test_agreement_and_disagreements_and_only_an_admin_adjudicates(ann, bob, admin):
    tools = replayed(TOOLS_LOOP)
    detections = list(tools.detections.order_by("id"))
    for detection in detections:
        token_client(ann).post(
            f"/api/detections/{detection.pk}/labels", {"label": "true_loop"}, content_type="application/json"
        )
    # bob agrees on all but the first backoff detection
    backoff = next(d for d in detections if d.detector == "backoff")
    for detection in detections:
        label = "false_positive" if detection.pk == backoff.pk else "true_loop"
        token_client(bob).post(
            f"/api/detections/{detection.pk}/labels", {"label": label}, content_type="application/json"
        )

    rows = {(r["detector"], r["model"]): r for r in agreement_rows(Session.objects.all())}
    model = "kimi-k2.6 thinking (via opencode go plan)"
    assert rows[("backoff", model)] == {
        "detector": "backoff",
        "model": model,
        "reviewers": 2,
        "items": 2,
        "compared": 2,
        "method": "cohen",
        "kappa": 0.0,
    }
    assert rows[("tool_repetition", model)]["kappa"] is None  # one category only: chance agreement is 1
    (row,) = disagreements(Session.objects.all())
    assert (row["item"], row["labels"]) == (
        "backoff|backoff_advised|session|1|3|3",
        [("ann", "true_loop", ""), ("bob", "false_positive", "")],
    )

    body = {"session": tools.pk, "item": row["item"], "label": "false_positive"}
    refused = token_client(bob).post("/api/adjudications", body, content_type="application/json")
    assert (refused.status_code, refused.json()["error"]) == (
        403,
        "this needs the admin role in the session's project; you are a reviewer",
    )
    accepted = token_client(admin).post("/api/adjudications", body, content_type="application/json")
    assert (accepted.status_code, accepted.json()) == (201, body)
    assert Adjudication.objects.get().adjudicator == admin
    unknown = token_client(admin).post("/api/adjudications", {**body, "item": "x"}, content_type="application/json")
    assert (unknown.status_code, unknown.json()["field"]) == (400, "item")
