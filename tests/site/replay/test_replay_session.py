"""`replay_session`: the Monitor over a stored session gives exactly what
`loopguard scan` gives on the file; results are replaced per session × profile."""

from __future__ import annotations

import pytest

from detector.importers import parse_path
from detector.monitor import Monitor
from loopguard_site.replay.models import CheckpointEvaluation, Detection
from loopguard_site.replay.services import ReplayError, ReplaySummary, replay_session
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import DEMO_DIR, DEMO_FILES, PROFILES, scan_json, store_demo, stored_detections


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
    counts = {(name, p): len(scan_json(name, p)["detections"]) for name in DEMO_FILES for p in ("default", "seed000")}
    assert {key: n for key, n in counts.items() if n} == {
        ("loop-content-numbered-agile.jsonl", "default"): 1,
        ("loop-reasoning-two-exits-riddle.jsonl", "default"): 1,
        ("loop-tools-readmediafile.jsonl", "default"): 8,
    }


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        (
            "loop-reasoning-two-exits-riddle.jsonl",
            ReplaySummary(1, 2940, 1657, "reasoning", "text_loop", "block_cycle", 76, 4449 - 1657),
        ),
        (
            "loop-tools-readmediafile.jsonl",
            ReplaySummary(8, 2, 0, "tools", "tool_outcomes", "repeated_failing_batch", 9, 4),
        ),
        ("normal-content-sudoku-grids.jsonl", ReplaySummary()),
    ],
)
@pytest.mark.django_db
def test_it_summarises_the_first_detection_and_what_the_loop_cost(name, summary):
    session = store_demo(name)
    found = replay_session(session=session, profile_name="default")
    first = Detection.objects.filter(session=session).order_by("event_seq", "id").first()

    assert found == summary
    if first is not None:
        assert (first.at, first.start, first.channel, first.event_seq) == (
            summary.first_detection_at, summary.first_detection_start, summary.first_detection_channel,
            summary.first_detection_seq,
        )  # fmt: skip


@pytest.mark.django_db
def test_a_rerun_replaces_that_session_and_profiles_results_only():
    session = store_demo("loop-tools-readmediafile.jsonl")
    other = store_demo("loop-tools-readmediafile.jsonl")
    replay_session(session=session, profile_name="default")
    replay_session(session=session, profile_name="preview")
    replay_session(session=other, profile_name="default")
    first_ids = set(Detection.objects.filter(session=session, profile="default").values_list("id", flat=True))
    before = stored_detections(session, "default")

    replay_session(session=session, profile_name="default")

    assert stored_detections(session, "default") == before
    assert Detection.objects.filter(session=session, profile="default").count() == 8
    assert not first_ids & set(Detection.objects.filter(session=session).values_list("id", flat=True))
    assert Detection.objects.filter(session=session, profile="preview").count() == 8
    assert Detection.objects.filter(session=other, profile="default").count() == 8


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
    assert Detection.objects.filter(session=session, profile="default").count() == 8


@pytest.mark.django_db
def test_an_empty_session_stores_nothing():
    session = session_create_from_events(title="e", model="m", source_format="events", parser_version="1", events=[])
    assert replay_session(session=session, profile_name="default") == ReplaySummary()
    assert Detection.objects.filter(session=session).count() == 0
