"""Health (seed 003): a live session with no event for
LOOPGUARD_LIVE_STALL_SECONDS is marked `stalled`; its next event revives
it. Time is frozen with time_machine; the sweep is called as the lab's
sweeper thread calls it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async

from loopguard_site.live.services import (
    live_detection_dict,
    live_ingest,
    live_session_close,
    live_sessions_mark_stalled,
    live_sessions_tick,
)
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events, session_create_live

from .conftest import TIMEOUT, connected, ingest_socket, receive, viewer_socket

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
HELLO = {"type": "content", "text": "Hello. "}


def state(session: Session) -> str:
    session.refresh_from_db()
    return session.state


@pytest.mark.django_db
def test_it_marks_silent_live_and_looping_sessions_stalled_after_the_setting(settings, producer, loop_events):
    settings.LOOPGUARD_LIVE_STALL_SECONDS = 60
    with time_machine.travel(T0, tick=False) as clock:
        quiet = session_create_live(model="m", uploader=producer.user)
        talking = session_create_live(model="m", uploader=producer.user)
        looping = session_create_live(model="m", uploader=producer.user)
        stopped = session_create_live(model="m", uploader=producer.user)
        closed = session_create_live(model="m", uploader=producer.user)
        stored = session_create_from_events(
            title="upload", model="m", source_format="events", parser_version="1", events=[HELLO]
        )
        clock.shift(10)
        live_ingest(session_id=talking.pk, seq=1, events=[HELLO])
        # a warn (700 s of silence by the events' clock) makes it `looping`
        live_ingest(session_id=looping.pk, seq=1, events=[{**HELLO, "t": 0}, {**HELLO, "t": 700}])
        live_ingest(session_id=stopped.pk, seq=1, events=loop_events[:60])
        live_session_close(session_id=closed.pk)
        states_before = [state(s) for s in (quiet, talking, looping, stopped, closed, stored)]

        clock.move_to(T0 + timedelta(seconds=59.999))
        early = live_sessions_mark_stalled(now=datetime.now(tz=UTC))
        clock.move_to(T0 + timedelta(seconds=60))
        at_60 = live_sessions_mark_stalled(now=datetime.now(tz=UTC))
        clock.move_to(T0 + timedelta(seconds=70))
        at_70 = live_sessions_mark_stalled(now=datetime.now(tz=UTC))
        again = live_sessions_mark_stalled(now=datetime.now(tz=UTC))

    assert states_before == ["live", "live", "looping", "stopped", "closed", "stored"]
    assert (early, at_60, at_70, again) == ([], [quiet.pk], [talking.pk, looping.pk], [])
    assert [state(s) for s in (quiet, talking, looping, stopped, closed, stored)] == [
        "stalled", "stalled", "stalled", "stopped", "closed", "stored"
    ]  # fmt: skip


@pytest.mark.django_db
def test_the_next_event_revives_a_stalled_session(settings, producer):
    settings.LOOPGUARD_LIVE_STALL_SECONDS = 60
    with time_machine.travel(T0, tick=False) as clock:
        plain = session_create_live(model="m", uploader=producer.user)
        looped = session_create_live(model="m", uploader=producer.user)
        live_ingest(session_id=looped.pk, seq=1, events=[{**HELLO, "t": 0}, {**HELLO, "t": 700}])
        clock.shift(61)
        marked = live_sessions_mark_stalled(now=datetime.now(tz=UTC))
        revived = [
            live_ingest(session_id=plain.pk, seq=1, events=[HELLO]).state,
            live_ingest(session_id=looped.pk, seq=2, events=[HELLO]).state,
        ]
        clock.shift(59)
        not_yet = live_sessions_mark_stalled(now=datetime.now(tz=UTC))

    assert (marked, revived, not_yet) == ([plain.pk, looped.pk], ["live", "looping"], [])


@pytest.mark.django_db(transaction=True)
def test_viewers_see_the_session_stall(live_services, settings, live_session, producer):
    settings.LOOPGUARD_LIVE_STALL_SECONDS = 60

    async def watch() -> list[dict]:
        viewer = viewer_socket(live_session, producer)
        await connected(viewer)
        await sweep()
        messages = await receive(viewer, 1)
        await viewer.disconnect()
        return messages

    @database_sync_to_async
    def sweep() -> list[int]:
        return live_sessions_mark_stalled(now=live_session.created + timedelta(seconds=60))

    assert async_to_sync(watch)() == [{"state": "stalled"}]


def timed(*ts: float) -> list[dict]:
    return [{"type": "content", "text": f"chunk at {t}. ", "t": t} for t in ts]


@pytest.mark.django_db
def test_silence_fires_the_health_detector_through_monitor_tick(producer):
    with time_machine.travel(T0, tick=False) as clock:
        timed_session = session_create_live(model="m", uploader=producer.user)
        untimed = session_create_live(model="m", uploader=producer.user)
        live_ingest(session_id=timed_session.pk, seq=1, events=timed(0, 2.5, 5))
        live_ingest(session_id=untimed.pk, seq=1, events=[HELLO])
        ticks = []
        for seconds in (599, 600, 601, 1799, 1800, 4000):
            clock.move_to(T0 + timedelta(seconds=seconds))
            ticks.append(live_sessions_tick(now=datetime.now(tz=UTC)))

    rows = Detection.objects.filter(session=timed_session).order_by("id")
    assert ticks == [[], [timed_session.pk], [], [], [timed_session.pk], []]
    assert [(d.type, d.action, d.event_seq, d.extra["gap_s"]) for d in rows] == [
        ("stream_stalled", "warn", 3, 600.0),
        ("stream_idle", "stop", 3, 1800.0),
    ]
    assert (state(timed_session), state(untimed)) == ("stopped", "live")
    assert not Detection.objects.filter(session=untimed).exists()


@pytest.mark.django_db(transaction=True)
def test_the_producer_and_viewers_hear_of_a_stop_fired_by_silence(live_services, live_session, producer):
    with time_machine.travel(T0, tick=False):
        live_ingest(session_id=live_session.pk, seq=1, events=timed(0, 5))

    @database_sync_to_async
    def tick() -> list[int]:
        return live_sessions_tick(now=T0 + timedelta(seconds=1805))

    async def scenario() -> tuple:
        socket = ingest_socket(live_session, producer)
        viewer = viewer_socket(live_session, producer)
        await socket.connect(timeout=TIMEOUT)
        await viewer.connect(timeout=TIMEOUT)
        before = (await receive(socket, 1), await receive(viewer, 2))
        await tick()
        after = (await receive(socket, 2), await receive(viewer, 3))
        await socket.disconnect()
        await viewer.disconnect()
        return before, after

    before, after = async_to_sync(scenario)()

    idle = live_detection_dict(Detection.objects.get(session=live_session, type="stream_idle"))
    stalled = live_detection_dict(Detection.objects.get(session=live_session, type="stream_stalled"))
    assert before[0] == [{"resume": 1}]
    assert [list(m) for m in before[1]] == [["state"], ["events"]]
    # one tick after 30 minutes of silence: the stall (warn) and the dead stream (stop) at once
    assert after == (
        [{"detection": stalled}, {"detection": idle}],
        [{"detection": stalled}, {"detection": idle}, {"state": "stopped"}],
    )
