"""selectors.py: streams from stored events, profiles, detection and checkpoint rows."""

from __future__ import annotations

import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.timeline.selectors import (
    session_checkpoint_rows,
    session_detection_rows,
    session_profiles,
    session_streams,
)
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import REASONING_LOOP, TOOLS_LOOP, monitor_results, replayed_demo


@pytest.mark.django_db
def test_it_reads_the_streams_of_the_stored_events_in_seq_order():
    events = [{"type": "reasoning", "text": "ab"}, {"type": "tool_call", "name": "ls", "args": {}},
              {"type": "reasoning", "text": "cd"}]  # fmt: skip
    session = session_create_from_events(title="s", model="", source_format="events", parser_version="1", events=events)
    streams = session_streams(session)
    assert (streams.texts["reasoning"], streams.length, [c.seq for c in streams.tool_calls]) == ("abcd", 5, [2])


@pytest.mark.django_db
def test_it_lists_the_profiles_with_results_builtin_first(user):
    session = replayed_demo(REASONING_LOOP, ("seed000", "default", "gemini"))
    Detection.objects.filter(session=session, profile="default").update(profile="zz-custom")
    assert session_profiles(session.pk) == ["seed000", "zz-custom"]  # gemini stored nothing

    job = replay_job_create(user=user, profiles=["gemini"], session_ids=[session.pk])
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="test")
    assert session_profiles(session.pk) == ["seed000", "gemini", "zz-custom"]  # a finished run, if empty


@pytest.mark.django_db
def test_it_gives_the_detections_with_their_event_and_the_checkpoints_of_a_profile():
    session = replayed_demo(REASONING_LOOP, ("default", "seed000"))
    detections, _ = monitor_results(REASONING_LOOP, "default")
    _, checkpoints = monitor_results(REASONING_LOOP, "seed000")

    rows = session_detection_rows(session_id=session.pk, profile="default")

    assert [{k: v for k, v in row.items() if k not in ("id", "profile")} for row in rows] == detections
    assert [row["profile"] for row in rows] == ["default"] * len(detections) and len(detections) == 1
    assert session_detection_rows(session_id=session.pk, profile="seed000") == []
    assert session_checkpoint_rows(session_id=session.pk, profile="seed000") == checkpoints
    assert len(checkpoints) == 3


@pytest.mark.django_db
def test_tool_detections_come_in_firing_order():
    session = replayed_demo(TOOLS_LOOP)
    rows = session_detection_rows(session_id=session.pk, profile="default")
    assert [(r["detector"], r["start"], r["end"], r["at"]) for r in rows][:3] == [
        ("tool_outcomes", 0, 2, 2), ("tool_repetition", 0, 3, 3), ("repeated_failure", 0, 3, 3),
    ]  # fmt: skip
