"""The replay comparison reads reviewers' labels, tags only where there are none."""

from __future__ import annotations

import pytest

from loopguard_site.replay.compare import compare_profiles
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.review.services import label_detection_set
from loopguard_site.transcripts.models import Session
from tests.site.replay.conftest import store_demo

from .conftest import REASONING_LOOP, TOOLS_LOOP


@pytest.mark.django_db
def test_compare_uses_the_review_label_over_the_tag(ann):
    mislabelled = store_demo(REASONING_LOOP, tags=("normal",))
    tagged = store_demo(TOOLS_LOOP, tags=("loop",))
    job = replay_job_create(user=ann, profiles=["default", "gemini"], session_ids=[mislabelled.pk, tagged.pk])
    for session in (mislabelled, tagged):
        replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="test")
    (detection,) = mislabelled.detections.filter(profile="default")
    label_detection_set(detection=detection, reviewer=ann, label="true_loop")

    comparison = compare_profiles(
        among=Session.objects.all(), session_ids=None, profile_a="default", profile_b="gemini"
    )

    assert [(s.session_id, s.label) for s in comparison.sessions] == [(mislabelled.pk, "loop"), (tagged.pk, "loop")]
    assert (comparison.metrics["default"].loops, comparison.metrics["default"].recall) == (2, 1.0)
