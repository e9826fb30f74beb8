"""`replay.services.found_store`, the one writer of detection and checkpoint
rows: what it writes, and that live ingest and replay write the same rows
for the same events."""

from __future__ import annotations

import pytest

from detector import Checkpoint
from detector import Detection as Found
from detector.importers import parse_path
from loopguard_site.accounts.services import default_project
from loopguard_site.live.services import live_ingest
from loopguard_site.profiles.services import profiles_import
from loopguard_site.replay.models import CheckpointEvaluation, Detection, ReplayJob, ReplayRun, SessionVerdict
from loopguard_site.replay.services import found_store, replay_session
from loopguard_site.transcripts.services import session_create_from_events, session_create_live
from tests.shared_paths import REPO_ROOT

DETECTION_FIELDS = (
    "profile", "event_seq", "detector", "type", "channel", "start", "end", "at", "unit", "period", "repeats",
    "action", "message", "turn", "extra",
)  # fmt: skip
CHECKPOINT_FIELDS = (
    "profile", "event_seq", "detector", "channel", "checkpoint", "start", "end", "check_name", "result", "turn"
)  # fmt: skip


@pytest.mark.django_db
def test_it_writes_every_field_of_what_was_found_with_its_event_and_run():
    session = session_create_from_events(title="t", model="m", source_format="events", parser_version="1", events=[])
    job = ReplayJob.objects.create(project=default_project(), profiles=["p"], total=1)
    run = ReplayRun.objects.create(job=job, session=session, profile="p")
    found = [
        (7, Found("text_loop", "exact_period", "content", 10, 40, 41, "ab", 2, 15, "stop", "m1", 2, {"k": 1})),
        (9, Found("tool_repetition", "same_call", "tools", 0, 3, 4, "x()", 1, 4, "warn", "m2")),
    ]
    checkpoints = [(5, Checkpoint("reasoning_checkpoint", "reasoning", 2000, 1800, 2000, "short_unit_loop", "", 1))]

    rows = found_store(session=session, profile="p", run=run, found=found, checkpoints=checkpoints)

    assert rows == list(Detection.objects.filter(session=session).order_by("id"))
    assert [(row.run_id, *(getattr(row, f) for f in DETECTION_FIELDS)) for row in rows] == [
        (run.pk, "p", 7, "text_loop", "exact_period", "content", 10, 40, 41, "ab", 2, 15, "stop", "m1", 2, {"k": 1}),
        (run.pk, "p", 9, "tool_repetition", "same_call", "tools", 0, 3, 4, "x()", 1, 4, "warn", "m2", 0, {}),
    ]
    assert list(CheckpointEvaluation.objects.filter(session=session).values_list("run", *CHECKPOINT_FIELDS)) == [
        (run.pk, "p", 5, "reasoning_checkpoint", "reasoning", 2000, 1800, 2000, "short_unit_loop", "", 1)
    ]
    verdict = SessionVerdict.objects.get(session=session, profile="p")
    assert (verdict.looped, verdict.detection_count, verdict.first_detection_id) == (True, 2, rows[0].pk)


@pytest.mark.django_db
def test_live_ingest_and_replay_store_the_same_rows_for_the_same_events():
    # A profile of the project that both detects loops and records checkpoints,
    # chosen by the live session's model as the replay is told to use it.
    profiles_import(
        text='[profiles.both]\nextends = "default"\nmodels = ["riddle-*"]\n'
        "[profiles.both.reasoning_checkpoint]\nenabled = true\n",
        project=default_project(),
        user=None,
        fmt="toml",
    )
    events = parse_path(REPO_ROOT / "fixtures" / "demo" / "loop-reasoning-two-exits-riddle.jsonl", "events").events
    live = session_create_live(model="riddle-model")
    for seq, start in enumerate(range(0, len(events), 10), start=1):
        live_ingest(session_id=live.pk, seq=seq, events=events[start : start + 10])
    replayed = session_create_from_events(
        title="r", model="riddle-model", source_format="events", parser_version="1", events=events
    )
    replay_session(session=replayed, profile_name="both")

    live.refresh_from_db()
    assert live.profile == "both"
    rows = [
        (
            list(Detection.objects.filter(session=s).order_by("id").values_list("run", *DETECTION_FIELDS)),
            list(CheckpointEvaluation.objects.filter(session=s).order_by("id").values_list("run", *CHECKPOINT_FIELDS)),
        )
        for s in (live, replayed)
    ]
    assert rows[0] == rows[1]
    detections, checkpoints = rows[0]
    assert detections and checkpoints  # both kinds of row were compared
