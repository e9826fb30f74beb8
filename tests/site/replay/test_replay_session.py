"""`replay_session`: the Monitor over a stored session gives exactly what
`loopguard scan` gives on the file; results are replaced per session × profile."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from detector.importers import parse_path
from detector.monitor import Monitor
from loopguard_site.replay.models import CheckpointEvaluation, Detection, SessionVerdict
from loopguard_site.replay.services import ReplayError, ReplaySummary, replay_session, replay_session_profiles
from loopguard_site.transcripts.models import Event
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import (
    DEMO_DIR,
    DEMO_FILES,
    PROFILES,
    first_firing_seq,
    profile_breaks,
    scan_count,
    scan_json,
    store_demo,
    stored_detections,
)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", DEMO_FILES)
@pytest.mark.django_db
def test_it_stores_exactly_the_detections_of_loopguard_scan(name, profile):
    session = store_demo(name)
    expected = scan_json(name, profile)["detections"]

    summary = replay_session(session=session, profile_name=profile)

    assert stored_detections(session, profile) == expected
    assert summary.detection_count == len(expected)


def test_the_demo_files_hold_loops_for_the_comparison_above():
    # Guards the test above against comparing empty lists only.
    found = {(name, p) for name in DEMO_FILES for p in ("default", "seed000") if scan_count(name, p)}
    assert found == {
        ("loop-content-numbered-agile.jsonl", "default"),
        ("loop-content-queue-chant.jsonl", "default"),
        ("loop-reasoning-migration-order.jsonl", "default"),
        ("loop-reasoning-migration-order.jsonl", "seed000"),
        ("loop-reasoning-two-exits-riddle.jsonl", "default"),
        ("loop-tools-preview-grep.jsonl", "default"),
        ("loop-tools-readmediafile.jsonl", "default"),
    }


# Each demo file's channel lengths: reasoning and content characters, tool calls.
CHANNEL_LENGTHS = {
    "loop-reasoning-two-exits-riddle.jsonl": {"reasoning": 4449, "content": 0, "tools": 0},
    "loop-content-numbered-agile.jsonl": {"reasoning": 0, "content": 5406, "tools": 0},
    "loop-tools-readmediafile.jsonl": {"reasoning": 0, "content": 0, "tools": 4},
}


@pytest.mark.parametrize("name", sorted(CHANNEL_LENGTHS))
@pytest.mark.django_db
def test_it_summarises_the_first_detection_and_what_the_loop_cost(name):
    session = store_demo(name)
    detections = scan_json(name, "default")["detections"]
    first = detections[0]

    summary = replay_session(session=session, profile_name="default")

    assert summary == ReplaySummary(
        detection_count=len(detections),
        first_detection_at=first["at"],
        first_detection_start=first["start"],
        first_detection_channel=first["channel"],
        first_detection_detector=first["detector"],
        first_detection_type=first["type"],
        first_detection_seq=first_firing_seq(name, "default"),
        spent_after_loop=CHANNEL_LENGTHS[name][first["channel"]] - first["start"],
    )


@pytest.mark.django_db
def test_a_session_without_detections_has_an_empty_summary():
    session = store_demo("normal-content-sudoku-grids.jsonl")
    assert replay_session(session=session, profile_name="default") == ReplaySummary()


def test_the_summarised_files_hold_the_loops_the_summary_test_needs():
    # Guards the test above: positions come from the CLI, but each file must
    # keep its loop on the channel it is about.
    firsts = {name: scan_json(name, "default")["detections"][0] for name in CHANNEL_LENGTHS}
    assert {name: (d["channel"], d["start"] <= d["at"]) for name, d in firsts.items()} == {
        "loop-reasoning-two-exits-riddle.jsonl": ("reasoning", True),
        "loop-content-numbered-agile.jsonl": ("content", True),
        "loop-tools-readmediafile.jsonl": ("tools", True),
    }


@pytest.mark.django_db
def test_a_rerun_replaces_that_session_and_profiles_results_only():
    session = store_demo("loop-tools-readmediafile.jsonl")
    other = store_demo("loop-tools-readmediafile.jsonl")
    replay_session(session=session, profile_name="default")
    replay_session(session=session, profile_name="preview")
    replay_session(session=other, profile_name="default")
    first_ids = set(Detection.objects.filter(session=session, profile="default").values_list("id", flat=True))
    before = stored_detections(session, "default")
    found = scan_count("loop-tools-readmediafile.jsonl", "default")

    replay_session(session=session, profile_name="default")

    assert stored_detections(session, "default") == before
    assert Detection.objects.filter(session=session, profile="default").count() == found
    assert not first_ids & set(Detection.objects.filter(session=session).values_list("id", flat=True))
    assert Detection.objects.filter(session=session, profile="preview").count() == found
    assert Detection.objects.filter(session=other, profile="default").count() == found


@pytest.mark.django_db
def test_it_stores_each_checkpoint_evaluation_with_the_event_that_recorded_it():
    name = "loop-reasoning-two-exits-riddle.jsonl"
    session = store_demo(name)
    transcript = parse_path(DEMO_DIR / name, "events")
    monitor = Monitor("seed000", model=transcript.model)
    expected = []
    for seq, event in enumerate(transcript.events, start=1):
        monitor.feed(event)
        expected += [(seq, *c.to_dict().values()) for c in monitor.take_checkpoints()]

    replay_session(session=session, profile_name="seed000")
    replay_session(session=session, profile_name="seed000")

    stored = CheckpointEvaluation.objects.filter(session=session, profile="seed000").order_by("id")
    fields = ("event_seq", "detector", "channel", "checkpoint", "start", "end", "check_name", "result", "turn")
    assert list(stored.values_list(*fields)) == expected
    assert expected[0][1:] == (
        "reasoning_checkpoint", "reasoning", 2000, 1800, 2000, "short_unit_loop", "", 1
    )  # fmt: skip
    assert len(expected) == 3


@pytest.mark.django_db
def test_a_stored_event_the_monitor_refuses_is_named_and_the_old_results_stay():
    session = store_demo("loop-tools-readmediafile.jsonl")
    replay_session(session=session, profile_name="default")
    session.events.filter(seq=3).update(data={"type": "reasoning"})  # no text

    with pytest.raises(ReplayError, match=rf"^session {session.pk}, event 3: "):
        replay_session(session=session, profile_name="default")
    assert Detection.objects.filter(session=session, profile="default").count() == scan_count(
        "loop-tools-readmediafile.jsonl", "default"
    )


@pytest.mark.django_db
def test_an_empty_session_stores_nothing():
    session = session_create_from_events(title="e", model="m", source_format="events", parser_version="1", events=[])
    assert replay_session(session=session, profile_name="default") == ReplaySummary()
    assert Detection.objects.filter(session=session).count() == 0


@pytest.mark.parametrize("name", sorted(CHANNEL_LENGTHS))
@pytest.mark.django_db
def test_it_keeps_one_verdict_per_session_and_profile(name):
    session = store_demo(name)
    replay_session(session=session, profile_name="default")
    replay_session(session=session, profile_name="default")  # a re-run replaces, never adds
    replay_session(session=session, profile_name="seed000")

    verdicts = {v.profile: v for v in SessionVerdict.objects.filter(session=session)}
    assert sorted(verdicts) == ["default", "seed000"]
    for profile, verdict in verdicts.items():
        rows = list(Detection.objects.filter(session=session, profile=profile).order_by("event_seq", "id"))
        assert verdict.looped == bool(rows)
        assert verdict.detection_count == len(rows)
        first = rows[0] if rows else None
        assert verdict.first_detection_id == (first and first.pk)
        assert verdict.first_detection_detector == (first.detector if first else "")
        assert verdict.first_detection_start == (first and first.start)
        assert verdict.first_detection_seq == (first and first.event_seq)
    assert verdicts["default"].looped  # every demo file loops under the default profile


CHECKPOINT_FIELDS = ("event_seq", "detector", "channel", "checkpoint", "start", "end", "check_name", "result", "turn")


@pytest.mark.parametrize("name", DEMO_FILES)
@pytest.mark.django_db
def test_several_profiles_at_once_store_what_each_alone_stores_reading_the_events_once(name):
    alone, together = store_demo(name), store_demo(name)
    singles = [replay_session(session=alone, profile_name=profile) for profile in PROFILES]
    events_table = Event._meta.db_table

    with CaptureQueriesContext(connection) as queries:
        outcomes = replay_session_profiles(session=together, runs=[(profile, None) for profile in PROFILES])

    assert outcomes == singles
    assert len([q for q in queries if f'FROM "{events_table}"' in q["sql"]]) == 1
    for profile in PROFILES:
        assert stored_detections(together, profile) == scan_json(name, profile)["detections"], profile
        checkpoints = [
            list(CheckpointEvaluation.objects.filter(session=s, profile=profile).order_by("id").values_list(
                *CHECKPOINT_FIELDS
            ))
            for s in (alone, together)
        ]  # fmt: skip
        assert checkpoints[0] == checkpoints[1], profile
        verdicts = [SessionVerdict.objects.filter(session=s, profile=profile).values_list(
            "looped", "detection_count", "first_detection_seq", "first_detection_detector"
        ).get() for s in (alone, together)]  # fmt: skip
        assert verdicts[0] == verdicts[1], profile


@pytest.mark.django_db
def test_a_profile_failing_in_the_middle_fails_alone(monkeypatch):
    name = "loop-tools-readmediafile.jsonl"
    session = store_demo(name)
    profile_breaks(monkeypatch, "seed000", at_event=5)
    default, broken, unknown = replay_session_profiles(
        session=session, runs=[("default", None), ("seed000", None), ("no-such-profile", None)]
    )

    assert default.detection_count == scan_count(name, "default")
    assert stored_detections(session, "default") == scan_json(name, "default")["detections"]
    assert (type(broken), str(broken)) == (RuntimeError, "detector bug")
    assert isinstance(unknown, Exception) and "no-such-profile" in str(unknown)
    assert sorted(SessionVerdict.objects.filter(session=session).values_list("profile", flat=True)) == ["default"]


@pytest.mark.django_db
def test_a_session_longer_than_a_read_chunk_is_read_whole(monkeypatch):
    from loopguard_site.transcripts import selectors

    name = "loop-reasoning-two-exits-riddle.jsonl"
    session = store_demo(name)
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", 7)  # the seq keyset must carry over chunk ends

    replay_session(session=session, profile_name="default")

    assert session.event_count > 7 * 3
    assert stored_detections(session, "default") == scan_json(name, "default")["detections"]
