"""The demo shows the product on first start: each session scanned with its
own profile and replayed through every built-in one, each built-in profile
firing on some session, and reviewers' labels in place so that comparisons
have precision and recall to show."""

from __future__ import annotations

import pytest

from detector.config import BUILTIN_PROFILES
from loopguard_site.demo import DEMO_DIR, demo_load
from loopguard_site.replay.compare import compare_profiles
from loopguard_site.replay.models import SessionVerdict
from loopguard_site.replay.services import queued_runs_execute_here
from loopguard_site.review.models import Label
from loopguard_site.review.selectors import session_truths
from loopguard_site.transcripts.models import Session


@pytest.fixture
def demo():
    demo_load()
    queued_runs_execute_here(session_ids=list(Session.objects.values_list("pk", flat=True)))  # the workers' part
    return {s.raw_upload.filename: s for s in Session.objects.select_related("raw_upload")}


@pytest.mark.django_db
def test_every_built_in_profile_fires_on_some_demo_session(demo):
    fired = {}
    for verdict in SessionVerdict.objects.filter(looped=True).select_related("session__raw_upload"):
        fired.setdefault(verdict.profile, set()).add(verdict.session.raw_upload.filename)

    assert set(fired) == set(BUILTIN_PROFILES)
    assert fired["seed000"] == {"loop-reasoning-migration-order.jsonl"}
    assert fired["gemini"] == {"loop-content-queue-chant.jsonl", "loop-tools-preview-grep.jsonl"}
    # The profile each session's model selects: *preview* models get `preview`.
    assert {name for name, s in demo.items() if s.profile == "preview"} == {
        "loop-tools-preview-grep.jsonl",  # gemini-3-pro-preview
        "normal-content-sudoku-grids.jsonl",  # gpt4_1106_preview
    }
    assert {s.profile for s in demo.values()} == {"default", "preview"}
    # Every session has the verdict of its own profile, and of each other built-in one.
    assert SessionVerdict.objects.count() == len(demo) * len(BUILTIN_PROFILES)


@pytest.mark.django_db
def test_the_demo_sessions_carry_the_reviewers_labels_of_their_files(demo):
    truths = {pk: truth.label for pk, truth in session_truths([s.pk for s in demo.values()]).items()}
    expected = {name: "loop" if name.startswith("loop-") else "normal" for name in demo}

    assert {name: truths.get(s.pk) for name, s in demo.items()} == expected
    assert len(demo) == len(list(DEMO_DIR.glob("*.jsonl")))
    # The loop labels are true-loop labels of detections the replays stored (same signature).
    loop_labels = Label.objects.filter(label="true_loop").select_related("session")
    assert loop_labels.count() == sum(1 for label in expected.values() if label == "loop")
    for label in loop_labels:
        stored = label.session.detections.filter(
            detector=label.detector, type=label.detection_type, channel=label.channel,
            start=label.start, end=label.end, at=label.at,
        )  # fmt: skip
        assert stored.exists(), label


@pytest.mark.django_db
def test_comparing_two_profiles_on_the_demo_gives_precision_and_recall(demo):
    comparison = compare_profiles(
        among=Session.objects.all(), session_ids=None, profile_a="default", profile_b="seed000"
    )
    default, seed000 = comparison.metrics["default"], comparison.metrics["seed000"]

    assert (default.loops, default.normals) == (6, 4)
    assert (default.precision, default.recall) == (1.0, 1.0)
    assert (seed000.precision, seed000.recall) == (1.0, 1 / 6)
