"""The overview's tallies (PostgreSQL triggers, overview/migrations/0001):
after imports, scans, rescans, labels, relabels, deletions and sessions that
change model, project or day, every figure read from the tallies equals the
same figure aggregated from the rows themselves (the embedded lab's way)."""

from __future__ import annotations

import datetime as dt

import pytest

from loopguard_site.accounts.models import Project, Role
from loopguard_site.overview import selectors
from loopguard_site.overview.models import DetectionDayTally, ModelTally
from loopguard_site.replay.models import Detection, SessionVerdict
from loopguard_site.replay.services import session_verdict_add
from loopguard_site.review.models import Label
from loopguard_site.review.services import label_detection_set, label_session_set
from loopguard_site.transcripts.models import Session
from tests.members import member
from tests.site.overview.test_overview import TODAY, scanned, stored

FIRST_DAY = TODAY - dt.timedelta(days=29)


def figures(projects) -> dict:
    per_model, verdicts = selectors.sessions_per_model(projects), selectors.verdicts_per_model(projects)
    live = selectors.live_state_counts(projects)
    return {
        "per_model": per_model,
        "verdicts": verdicts,
        "per_day": selectors.detections_per_day(projects, FIRST_DAY),
        "labels": selectors.label_progress(projects, verdicts),
        "totals": selectors.session_totals(per_model, live, projects),
    }


def tallied_and_counted(projects, monkeypatch) -> tuple[dict, dict]:
    tallied = figures(projects)
    with monkeypatch.context() as patch:
        patch.setattr(selectors, "_tallied", lambda: False)
        counted = figures(projects)
    return tallied, counted


@pytest.fixture
def busy(django_user_model):
    """Two projects; scans, a rescan, labels by two reviewers on one item."""
    alice = member(django_user_model.objects.create_user("alice"), Role.REVIEWER)
    bob = member(django_user_model.objects.create_user("bob"), Role.REVIEWER)
    other = Project.objects.create(name="other")
    a1, a2 = stored("a1", "qwen3"), stored("a2", "qwen3", day=TODAY - dt.timedelta(days=3))
    b1, hidden = stored("b1", "gpt-4o"), stored("hidden", "qwen3", project=other)
    d1, d2 = scanned(a1, "default", ("text_loop", "block_cycle"), ("backoff", "backoff_advised"))
    scanned(a1, "preview", ("text_loop", "block_cycle"))
    scanned(a2, "default", ("text_loop", "block_cycle"))
    scanned(b1, "default")
    scanned(hidden, "default", ("text_loop", "block_cycle"))
    label_detection_set(detection=d1, reviewer=alice, label="false_positive")
    label_detection_set(detection=d1, reviewer=bob, label="true_loop")
    label_detection_set(detection=d2, reviewer=alice, label="true_loop")
    label_session_set(session=b1, reviewer=alice, label="clean")
    return {"alice": alice, "bob": bob, "other": other, "a1": a1, "a2": a2, "b1": b1, "d1": d1, "d2": d2}


@pytest.mark.django_db
def test_the_tallies_match_the_rows_after_scans_and_labels(busy, monkeypatch):
    for projects in (None, [busy["a1"].project_id], [busy["other"].pk]):
        tallied, counted = tallied_and_counted(projects, monkeypatch)
        assert tallied == counted
    tallied, _ = tallied_and_counted(None, monkeypatch)
    assert tallied["per_model"] == [{"model": "qwen3", "sessions": 3}, {"model": "gpt-4o", "sessions": 1}]
    assert tallied["totals"]["labels"] == 4
    qwen_default = ModelTally.objects.get(project_id=busy["a1"].project_id, model="qwen3", profile="default")
    assert (qwen_default.scanned, qwen_default.looped, qwen_default.detections) == (2, 2, 3)
    assert (qwen_default.labels, qwen_default.labelled, qwen_default.true_loop, qwen_default.false_positive) == (
        3, 2, 2, 1
    )  # fmt: skip


@pytest.mark.django_db
def test_the_tallies_follow_relabels_rescans_moves_and_deletions(busy, monkeypatch):
    a1, a2, b1 = busy["a1"], busy["a2"], busy["b1"]
    label_detection_set(detection=busy["d1"], reviewer=busy["bob"], label="false_positive")  # relabel
    Label.objects.filter(reviewer=busy["alice"], detection=busy["d1"]).delete()  # d1 stays labelled by bob
    Label.objects.filter(detection=busy["d2"]).delete()  # d2 is no longer labelled
    Detection.objects.filter(session=a2).delete()
    SessionVerdict.objects.filter(session=a2).delete()
    session_verdict_add(session=a2, profile="default", rows=[])  # rescanned clean
    rows = [Detection.objects.create(
        session=b1, profile="default", event_seq=1, detector="backoff", type="backoff_advised", channel="content",
        start=0, end=5, at=6, unit="x", period=1, repeats=5, action="stop", message="",
    )]  # fmt: skip
    SessionVerdict.objects.filter(session=b1).delete()
    session_verdict_add(session=b1, profile="default", rows=rows)
    moved_day = dt.datetime.combine(TODAY - dt.timedelta(days=40), dt.time(13, 5), tzinfo=dt.UTC)  # out of the window
    Session.objects.filter(pk=a1.pk).update(model="qwen3-next", created=moved_day)
    Session.objects.filter(pk=b1.pk).update(project=busy["other"])
    stored("new", "gpt-4o").delete()

    for projects in (None, [a1.project_id], [busy["other"].pk]):
        tallied, counted = tallied_and_counted(projects, monkeypatch)
        assert tallied == counted
    a2.delete()
    tallied, counted = tallied_and_counted(None, monkeypatch)
    assert tallied == counted
    assert tallied["per_model"] == [
        {"model": "gpt-4o", "sessions": 1}, {"model": "qwen3", "sessions": 1}, {"model": "qwen3-next", "sessions": 1}
    ]  # fmt: skip
    assert tallied["per_day"] == [
        {"day": TODAY, "detector": "backoff", "type": "backoff_advised", "detections": 1},
        {"day": TODAY, "detector": "text_loop", "type": "block_cycle", "detections": 1},
    ]
    moved = ModelTally.objects.get(project_id=a1.project_id, model="qwen3-next", profile="default")
    assert (moved.labels, moved.labelled, moved.true_loop, moved.false_positive) == (1, 1, 0, 1)
    assert not DetectionDayTally.objects.filter(day=TODAY - dt.timedelta(days=3)).exclude(detections=0).exists()
