"""A long session's stored layout: none right after an import (laying out
is kept off its path), the exact items once the scan the import queued has
run, after a replay of a session stored without one (laid out from the
replay's own read of the events, row for row as alone) and after live
appends (which extend it by the new events alone, once in
LAYOUT_EXTEND_EVENTS events; a page brings it up to date), and the places
and bins read from it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from loopguard_site.live import services as live_services
from loopguard_site.live.services import layout_due, live_ingest
from loopguard_site.replay import services as replay_services
from loopguard_site.replay.services import (
    queued_runs_execute_here,
    replay_job_create,
    replay_job_sessions_execute,
    replay_session,
)
from loopguard_site.review.retention import sessions_prune
from loopguard_site.transcripts import layout_rows, selectors
from loopguard_site.transcripts.event_rows import event_json, numbered_events_insert
from loopguard_site.transcripts.layout import LayoutBuilder, summary_bins
from loopguard_site.transcripts.layout_rows import (
    Point,
    layout_bins,
    layout_points,
    session_layout,
    session_layouts_update,
)
from loopguard_site.transcripts.models import Session, SessionItem, SessionLayout
from loopguard_site.transcripts.services import (
    Upload,
    session_create_from_events,
    session_create_live,
    sessions_import_upload,
)

ITEM_COLUMNS = ("index", "seq", "kind", "turn", "start", "end", "position", "reasoning", "content", "calls")


def turn_events(first: int, count: int) -> list[dict]:
    """Turns first..first+count-1, 5 events each: a turn, 9 characters of
    reasoning, 10 of content (markup, to be escaped), the same tool call and
    its result. Turn n's 20 positions start at 20 n."""
    events = []
    for n in range(first, first + count):
        events += [
            {"type": "turn"},
            {"type": "reasoning", "text": f"think {n:02d};"},
            {"type": "content", "text": f"<b>{n:02d}</b>&"},
            {"type": "tool_call", "name": "bash", "args": {"cmd": "make"}, "id": f"c{n}"},
            {"type": "tool_result", "id": f"c{n}", "ok": False, "output": f"<script>fail {n}</script>"},
        ]
    return events


def expected_items(turns: int) -> list[tuple]:
    """The items of `turn_events(0, turns)`, by hand: 4 a turn."""
    items = []
    for n in range(turns):
        base = (n * 9, n * 10, n)  # reasoning, content, calls before the turn
        items += [
            (4 * n, 5 * n + 1, "turn", n + 1, 0, 0, 20 * n, *base),
            (4 * n + 1, 5 * n + 2, "reasoning", n + 1, 9 * n, 9 * n + 9, 20 * n, *base),
            (4 * n + 2, 5 * n + 3, "content", n + 1, 10 * n, 10 * n + 10, 20 * n + 9, 9 * n + 9, 10 * n, n),
            (4 * n + 3, 5 * n + 4, "tools", n + 1, n, n + 1, 20 * n + 19, 9 * n + 9, 10 * n + 10, n),
        ]
    return items


def stored_items(session_id: int) -> list[tuple]:
    return list(SessionItem.objects.filter(session_id=session_id).order_by("index").values_list(*ITEM_COLUMNS))


def stored_marks(session_id: int) -> list[tuple]:
    rows = SessionItem.objects.filter(session_id=session_id, kind="tools").order_by("index")
    return list(rows.values_list("marks", "repeated"))


def state_of(session_id: int) -> dict:
    return SessionLayout.objects.get(session_id=session_id).state


@pytest.fixture
def long_sessions(settings):
    settings.LOOPGUARD_LAYOUT_MIN_EVENTS = 50


def imported(turns: int):
    """A session stored from `turn_events(0, turns)` and laid out as its scan lays it out."""
    session = session_create_from_events(
        title="long", model="", source_format="events", parser_version="t", events=turn_events(0, turns)
    )
    session_layouts_update([session])
    return session


@pytest.mark.django_db
def test_an_import_leaves_the_layout_to_its_scan_which_stores_every_item(long_sessions):
    data = "\n".join(json.dumps(event) for event in turn_events(0, 12)).encode()  # 60 events
    (outcome,) = sessions_import_upload([Upload.from_bytes("long.jsonl", data)], fmt="events")
    session = outcome.session
    assert session.event_count == 61  # a session event first
    assert (SessionItem.objects.count(), SessionLayout.objects.count()) == (0, 0)

    queued_runs_execute_here(session_ids=[session.pk])  # what a worker does with the scan's task

    assert stored_items(session.pk) == [(index, seq + 1, *rest) for index, seq, *rest in expected_items(12)]
    # The same call each turn: the first is call 0, the others repeat it.
    assert stored_marks(session.pk) == [([[None, 1]], 0)] + [([[0, n + 1]], 1) for n in range(1, 12)]
    state = state_of(session.pk)
    assert {k: state[k] for k in ("seq", "position", "reasoning", "content", "calls", "turns", "items")} == {
        "seq": 61, "position": 240, "reasoning": 108, "content": 120, "calls": 12, "turns": 12, "items": 48,
    }  # fmt: skip


@pytest.mark.django_db
def test_a_short_session_keeps_no_layout(long_sessions):
    session = imported(9)  # 45 events

    assert (SessionItem.objects.filter(session=session).count(), SessionLayout.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_live_appends_build_the_layout_once_long_enough_then_extend_it(long_sessions, monkeypatch):
    monkeypatch.setattr(live_services, "LAYOUT_EXTEND_EVENTS", 1)  # every batch extends it
    session = session_create_live(model="m")
    live_ingest(session_id=session.pk, seq=1, events=turn_events(0, 6))  # 30 events: too short
    assert not SessionLayout.objects.filter(session_id=session.pk).exists()

    # 55 events, the last a reasoning chunk the next message continues.
    live_ingest(session_id=session.pk, seq=2, events=[*turn_events(6, 4), {"type": "reasoning", "text": "abc"}])
    assert stored_items(session.pk) == [*expected_items(10), (40, 51, "reasoning", 10, 90, 93, 200, 90, 100, 10)]

    live_ingest(session_id=session.pk, seq=3, events=[{"type": "reasoning", "text": "defg"}, *turn_events(10, 2)])

    items = stored_items(session.pk)
    assert items[40] == (40, 51, "reasoning", 10, 90, 97, 200, 90, 100, 10)  # the same item, extended
    assert items[41] == (41, 53, "turn", 11, 0, 0, 207, 97, 100, 10)
    assert len(items) == 41 + 8
    assert state_of(session.pk)["seq"] == 62
    # Exactly what the scan of an import of the same events stores.
    whole = session_create_from_events(
        title="whole", model="", source_format="events", parser_version="t",
        events=[*turn_events(0, 10), {"type": "reasoning", "text": "abc"}, {"type": "reasoning", "text": "defg"},
                *turn_events(10, 2)],
    )  # fmt: skip
    session_layouts_update([whole])
    assert stored_items(whole.pk) == items
    assert stored_marks(whole.pk) == stored_marks(session.pk)
    assert state_of(whole.pk) == state_of(session.pk)  # its block counts too
    # The reasoning item that grew across messages, counted once in its block (position 200) with its 7 characters.
    assert state_of(session.pk)["blocks"]["reasoning"]["200"] == [1, 7, 0, 90, 10, 200, 207, 0.0, 0.0]


@pytest.mark.django_db
def test_a_live_session_extends_its_layout_once_in_layout_extend_events_and_a_page_brings_it_up_to_date(
    long_sessions, monkeypatch
):
    monkeypatch.setattr(live_services, "LAYOUT_EXTEND_EVENTS", 40)
    session = session_create_live(model="m")
    extended = []
    for turn in range(30):  # 5 events a message, 150 in all
        before = Session.objects.get(pk=session.pk).event_count
        live_ingest(session_id=session.pk, seq=turn + 1, events=turn_events(turn, 1))
        stored = SessionLayout.objects.filter(session_id=session.pk).first()
        if layout_due(session.pk, before, before + 5) and before + 5 >= 50:
            assert stored.state["seq"] == before + 5
            extended.append(before + 5)
        else:
            assert stored is None or stored.state["seq"] <= before
    assert len(extended) in (2, 3)  # past 50 events, one in every 40
    assert extended[1] - extended[0] == 40  # the first message past each point, 40 events apart

    session.refresh_from_db()
    assert session_layout(session).seq == 150
    assert stored_items(session.pk) == expected_items(30)


def test_layout_due_once_in_layout_extend_events_at_a_count_of_each_sessions_own(monkeypatch):
    monkeypatch.setattr(live_services, "LAYOUT_EXTEND_EVENTS", 100)
    due = [count for count in range(300) if layout_due(7, count, count + 1)]
    assert len(due) == 3 and due[1] - due[0] == due[2] - due[1] == 100
    assert all(layout_due(7, count, count + 100) for count in range(100))  # a batch of 100 events always
    assert sum(layout_due(7, count, count + 99) for count in range(100)) == 99  # of 99, all but one
    assert not layout_due(7, 50, 50)
    firsts = {
        next(count for count in range(100) if layout_due(session_id, count, count + 1)) for session_id in range(20)
    }
    assert len(firsts) > 10  # sessions started together extend in different batches


@pytest.mark.django_db
def test_a_replay_builds_the_layout_of_a_long_session_stored_without_one(long_sessions):
    session = session_create_from_events(
        title="long", model="", source_format="events", parser_version="t", events=turn_events(0, 12)
    )
    assert not SessionLayout.objects.filter(session_id=session.pk).exists()

    replay_session(session=session, profile_name="default")

    assert stored_items(session.pk) == expected_items(12)
    assert state_of(session.pk)["seq"] == 60


def varied_events(turns: int, first_t: float) -> list[dict]:
    """`turn_events` with a user message, timed chunks and a finish each
    turn, and text runs split over several events: every kind of item, with
    times to carry forward."""
    events = []
    for n, event in enumerate(turn_events(0, turns)):
        events.append(event)
        if event["type"] == "turn":
            events.append({"type": "user", "text": f"<i>go {n}</i>"})
        if event["type"] == "content":
            events += [{"type": "content", "text": " more", "t": first_t + n}, {"type": "content", "text": "."}]
        if event["type"] == "tool_result":
            events.append({"type": "finish", "reason": "tool_use" if n % 3 else "stop"})
    return events


def whole_layout(session_id: int) -> tuple[list[tuple], dict]:
    """Every column of the session's stored items, in order, and its state."""
    columns = [f.name for f in SessionItem._meta.fields if f.name not in ("id", "session")]
    items = SessionItem.objects.filter(session_id=session_id).order_by("index").values_list(*columns)
    return list(items), state_of(session_id)


def stored_pair(turns: int, first_t: float):
    """Two sessions of the same `varied_events`: one to replay, one to lay out alone."""
    return [
        session_create_from_events(
            title=title, model="", source_format="events", parser_version="t", events=varied_events(turns, first_t)
        )
        for title in ("replayed", "alone")
    ]


@pytest.mark.django_db
def test_a_replay_job_lays_out_the_events_it_reads_exactly_as_the_layout_built_alone(long_sessions, monkeypatch):
    # A chunk of sessions read together and one read in keyset chunks (20
    # events a query), two long enough to keep a layout, one short.
    monkeypatch.setattr(selectors, "EVENT_READ_CHUNK", 20)
    pairs = [stored_pair(turns, first_t) for turns, first_t in ((12, 0.5), (2, 7.0), (30, 100.0))]
    replayed = [pair[0] for pair in pairs]
    job = replay_job_create(user=None, profiles=["default", "seed000"], session_ids=[s.pk for s in replayed])
    rereads = []
    monkeypatch.setattr(layout_rows, "session_event_stream", lambda *args, **kwargs: rereads.append(args) or iter(()))

    replay_job_sessions_execute(job_id=job.pk, session_ids=[s.pk for s in replayed], claim="chunk")

    assert rereads == []  # laid out from the replay's read alone
    assert set(job.runs.values_list("state", flat=True)) == {"done"}
    monkeypatch.undo()
    long_pairs = [pairs[0], pairs[2]]
    for _, alone in long_pairs:
        session_layouts_update([alone])
    assert [whole_layout(replayed.pk) for replayed, _ in long_pairs] == [
        whole_layout(alone.pk) for _, alone in long_pairs
    ]
    assert sorted(SessionLayout.objects.values_list("session_id", flat=True)) == sorted(
        session.pk for pair in long_pairs for session in pair
    )  # the short pair (18 events) keeps none
    items, state = whole_layout(pairs[2][0].pk)  # 9 events and 6 items a turn
    assert (len(items), state["seq"], state["turns"], state["calls"], state["has_time"]) == (180, 270, 30, 30, True)


@pytest.mark.django_db
def test_events_stored_after_the_replay_read_them_extend_the_layout_it_built(long_sessions, monkeypatch):
    session, alone = stored_pair(12, 0.5)
    later = [*turn_events(12, 2), {"type": "content", "text": "end", "t": 99.0}]
    store = replay_services._results_store

    def appended_then_stored(results):  # a live append between the replay's read and its store
        count = session.event_count
        rows = [(session.pk, count + n, event["type"], event_json(event)) for n, event in enumerate(later, start=1)]
        numbered_events_insert(rows)
        Session.objects.filter(pk=session.pk).update(event_count=count + len(later))
        results[0].session.event_count = count + len(later)
        store(results)

    monkeypatch.setattr(replay_services, "_results_store", appended_then_stored)
    replay_session(session=session, profile_name="default")

    numbered_events_insert(
        (alone.pk, alone.event_count + n, event["type"], event_json(event)) for n, event in enumerate(later, start=1)
    )
    Session.objects.filter(pk=alone.pk).update(event_count=alone.event_count + len(later))
    alone.refresh_from_db()
    session_layouts_update([alone])
    assert state_of(session.pk)["seq"] == alone.event_count == 12 * 9 + len(later)
    assert whole_layout(session.pk) == whole_layout(alone.pk)


@pytest.mark.django_db
def test_points_find_the_item_holding_each_offset(long_sessions):
    session = imported(12)

    places = layout_points(
        session.pk,
        [
            Point("content", 0), Point("content", 35), Point("content", 40), Point("content", 40, True),
            Point("content", 10_000), Point("tools", 7), Point("seq", 23), Point("user", 3),
        ],
    )  # fmt: skip

    # (item index, its start, size, stream position)
    assert [(p.index, p.start, p.size, p.position) if p else None for p in places] == [
        (2, 0, 10, 9), (14, 30, 10, 69), (18, 40, 10, 89), (14, 30, 10, 69),
        (46, 110, 10, 229), (31, 7, 1, 159), (18, 40, 10, 89), None,
    ]  # fmt: skip


@pytest.mark.django_db
def test_bins_count_the_items_per_kind(long_sessions):
    session = imported(30)  # positions 0..600

    rows = layout_bins(session.pk, axis="offset", low=0, high=600, bins=3)

    summary = [(r["kind"], r["bin"], r["items"], r["size"], r["repeated"], r["first"], r["turn"], r["x0"], r["x1"])
               for r in rows]  # fmt: skip
    assert summary == [
        ("content", 0, 10, 100, 0, 0, 1, 9, 199), ("content", 1, 10, 100, 0, 100, 11, 209, 399),
        ("content", 2, 10, 100, 0, 200, 21, 409, 599),
        ("reasoning", 0, 10, 90, 0, 0, 1, 0, 189), ("reasoning", 1, 10, 90, 0, 90, 11, 200, 389),
        ("reasoning", 2, 10, 90, 0, 180, 21, 400, 589),
        ("tools", 0, 10, 10, 9, 0, 1, 19, 200), ("tools", 1, 10, 10, 10, 10, 11, 219, 400),
        ("tools", 2, 10, 10, 10, 20, 21, 419, 600),
        ("turn", 0, 10, 0, 0, 0, 1, 0, 180), ("turn", 1, 10, 0, 0, 0, 11, 200, 380),
        ("turn", 2, 10, 0, 0, 0, 21, 400, 580),
    ]  # fmt: skip


def test_blocks_grow_wider_as_the_stream_grows_and_merge_into_bins():
    builder = LayoutBuilder()
    for seq, event in enumerate(turn_events(0, 50), start=1):  # 1,000 positions: past 800 blocks of 1
        builder.feed(seq, event)

    assert builder.state.block_width == 2
    # 501 blocks of 2 positions in 3 bins of 167 blocks (334 positions).
    rows = [(r["kind"], r["bin"], r["items"], r["size"], r["repeated"], r["first"], r["turn"], r["x0"], r["x1"])
            for r in summary_bins(builder.state, 3, "offset") if r["kind"] in ("tools", "turn")]  # fmt: skip
    assert rows == [
        ("tools", 0, 16, 16, 15, 0, 1, 19, 320), ("tools", 1, 17, 17, 17, 16, 17, 339, 660),
        ("tools", 2, 17, 17, 17, 33, 34, 679, 1000),
        ("turn", 0, 17, 0, 0, 0, 1, 0, 320), ("turn", 1, 17, 0, 0, 0, 18, 340, 660),
        ("turn", 2, 16, 0, 0, 0, 35, 680, 980),
    ]  # fmt: skip


@pytest.mark.embedded
@pytest.mark.django_db
def test_the_layout_is_stored_and_read_on_sqlite_too(long_sessions):
    session = imported(12)

    assert stored_items(session.pk) == expected_items(12)
    places = layout_points(session.pk, [Point("content", 35), Point("seq", 23)])
    assert [(place.index, place.position) for place in places] == [(14, 69), (18, 89)]
    assert len(layout_bins(session.pk, axis="offset", low=0, high=240, bins=3)) == 12


@pytest.mark.django_db
def test_a_prune_deletes_a_long_sessions_layout(long_sessions):
    kept, pruned = imported(12), imported(12)
    Session.objects.filter(pk=pruned.pk).update(created=datetime.now(UTC) - timedelta(days=40))

    sessions_prune(before=datetime.now(UTC) - timedelta(days=30))

    assert set(SessionItem.objects.values_list("session_id", flat=True)) == {kept.pk}
    assert list(SessionLayout.objects.values_list("session_id", flat=True)) == [kept.pk]
