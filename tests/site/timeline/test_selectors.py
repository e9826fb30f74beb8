"""selectors.py: streams from stored events, profiles, detection and checkpoint rows."""

from __future__ import annotations

import pytest

from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.timeline.selectors import (
    PAGE_FIELDS,
    session_checkpoint_rows,
    session_detection_rows,
    session_profiles,
    session_streams,
)
from loopguard_site.timeline.streams import streams_from_events
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import REASONING_LOOP, TOOLS_LOOP, monitor_results, replayed_demo
from .test_streams import EVENTS as STREAM_EVENTS


def assert_streams_read_from_the_database_equal_the_events_laid_out_in_memory():
    events = [*STREAM_EVENTS, {"type": "tool_result", "output": "no ok field"}, {"type": "content", "text": "", "t": 9}]
    session = session_create_from_events(title="s", model="", source_format="events", parser_version="1", events=events)
    assert session_streams(session) == streams_from_events(enumerate(events, start=1))


@pytest.mark.django_db
def test_it_reads_the_streams_of_the_stored_events_in_seq_order():
    assert_streams_read_from_the_database_equal_the_events_laid_out_in_memory()


@pytest.mark.embedded
@pytest.mark.django_db
def test_it_reads_the_same_streams_from_sqlite():
    assert_streams_read_from_the_database_equal_the_events_laid_out_in_memory()


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

    assert [{k: v for k, v in row.items() if k != "id"} for row in rows] == [
        {k: d[k] for k in (*PAGE_FIELDS, "event_seq") if k != "id"} for d in detections
    ]
    assert len(detections) == 1
    assert [row["id"] for row in rows] == list(Detection.objects.filter(profile="default").values_list("id", flat=True))
    assert session_detection_rows(session_id=session.pk, profile="seed000") == []
    assert session_detection_rows(session_id=session.pk, profile="") == []  # not every profile's
    assert session_checkpoint_rows(session_id=session.pk, profile="seed000") == checkpoints
    assert len(checkpoints) == 3


@pytest.mark.django_db
def test_tool_detections_come_in_firing_order():
    session = replayed_demo(TOOLS_LOOP)
    rows = session_detection_rows(session_id=session.pk, profile="default")
    assert [(r["detector"], r["start"], r["end"], r["at"]) for r in rows][:3] == [
        ("tool_outcomes", 0, 2, 2), ("tool_repetition", 0, 3, 3), ("repeated_failure", 0, 3, 3),
    ]  # fmt: skip


@pytest.mark.django_db
def test_a_window_reads_only_the_detections_meeting_it_and_the_events_of_its_channel():
    session = replayed_demo(TOOLS_LOOP)
    rows = session_detection_rows(session_id=session.pk, profile="default", channel="tools", start=3, end=10)
    assert [(r["detector"], r["start"], r["end"], r["at"]) for r in rows] == [
        ("tool_repetition", 0, 3, 3), ("repeated_failure", 0, 3, 3), ("tool_outcomes", 0, 3, 3),
        ("repeated_failure", 0, 4, 4), ("tool_outcomes", 0, 4, 4),
    ]  # fmt: skip
    assert session_detection_rows(session_id=session.pk, profile="default", channel="tools", start=5) == []
    assert session_detection_rows(session_id=session.pk, profile="default", channel="content", start=0) == []
    tools = session_streams(session, channel="tools")
    assert (len(tools.tool_calls), len(tools.turns), tools.texts) == (4, 4, {"reasoning": "", "content": ""})
    assert [c.repeat_of for c in tools.tool_calls] == [None, 0, 0, 0]
    text = session_streams(replayed_demo(REASONING_LOOP, profiles=()), channel="reasoning")
    assert (len(text.texts["reasoning"]), text.tool_calls, text.turns) == (4449, [], [])
