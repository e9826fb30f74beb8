"""Two profiles side by side on stored replays: differing detections, which
fired first, and the metrics over sessions labelled by their tags."""

from __future__ import annotations

import pytest

from loopguard_site.replay.compare import compare_profiles
from loopguard_site.replay.metrics import ProfileMetrics
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.transcripts.models import Session

from .conftest import first_firing_seq, scan_count, scan_json, store_demo

RIDDLE = "loop-reasoning-two-exits-riddle.jsonl"
TOOLS = "loop-tools-readmediafile.jsonl"
CLEAN = "normal-content-sudoku-grids.jsonl"


def replayed(user, sessions, profiles):
    job = replay_job_create(user=user, profiles=list(profiles), session_ids=[s.pk for s in sessions])
    for session in sessions:
        replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim=f"t{session.pk}")


@pytest.mark.django_db
def test_it_lists_differing_detections_and_which_profile_fired_first(user):
    riddle, tools, clean = store_demo(RIDDLE, tags=("loop",)), store_demo(TOOLS), store_demo(CLEAN, tags=("normal",))
    replayed(user, [riddle, tools, clean], ["default", "seed000"])

    result = compare_profiles(among=Session.objects.all(), session_ids=None, profile_a="default", profile_b="seed000")

    rows = {row.session_id: row for row in result.sessions}
    assert list(rows) == [riddle.pk, tools.pk, clean.pk]
    assert [(r.label, r.earlier, r.common, len(r.only["default"]), len(r.only["seed000"])) for r in rows.values()] == [
        ("loop", "default", 0, 1, 0),
        (None, "default", 0, scan_count(TOOLS, "default"), 0),
        ("normal", None, 0, 0, 0),
    ]
    first, expected = rows[riddle.pk].first["default"], scan_json(RIDDLE, "default")["detections"][0]
    assert (first.channel, first.start, first.at, first.event_seq) == (
        expected["channel"], expected["start"], expected["at"], first_firing_seq(RIDDLE, "default")
    )  # fmt: skip
    delay = expected["at"] - expected["start"]
    assert rows[riddle.pk].first["seed000"] is None
    assert [r.differs for r in rows.values()] == [True, True, False]
    assert result.metrics == {
        "default": ProfileMetrics(1, 1, 1, 0, 1.0, 1.0, delay, delay),
        "seed000": ProfileMetrics(1, 1, 0, 0, None, 0.0, None, None),
    }


@pytest.mark.django_db
def test_the_same_detections_under_both_profiles_are_common_and_fire_together(user):
    tools = store_demo(TOOLS)
    replayed(user, [tools], ["default", "preview"])

    (row,) = compare_profiles(
        among=Session.objects.all(), session_ids=[tools.pk], profile_a="default", profile_b="preview"
    ).sessions

    assert (row.common, row.only, row.earlier, row.differs) == (
        scan_count(TOOLS, "default"), {"default": [], "preview": []}, "same", False
    )  # fmt: skip


@pytest.mark.django_db
def test_sessions_not_replayed_under_both_profiles_are_set_apart(user):
    both, one_only, never = store_demo(TOOLS), store_demo(TOOLS), store_demo(CLEAN)
    replayed(user, [both], ["default", "gemini"])
    replayed(user, [one_only], ["default"])

    result = compare_profiles(
        among=Session.objects.all(),
        session_ids=[both.pk, one_only.pk, never.pk],
        profile_a="default",
        profile_b="gemini",
    )

    assert [row.session_id for row in result.sessions] == [both.pk]
    assert result.not_replayed == [one_only.pk, never.pk]
