"""A stored session streamed into a new live session at a model's pace
("Stream live" on the session page): the events as a model streams them,
the stop where a guarded producer would stop, the close of a clean stream,
and who may start one."""

from __future__ import annotations

import math

import pytest

from detector import Monitor
from loopguard_site.live.models import LiveStream
from loopguard_site.live.services import live_session_stream_stored, streamed_events
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.selectors import session_event_stream
from loopguard_site.transcripts.services import session_create_from_events, session_create_live
from tests.members import member
from tests.site.replay.conftest import store_demo

COIN_FLIPS = "normal-reasoning-coin-flips.jsonl"  # DeepSeek-R1-Distill-Llama-8B, no loop
AGILE = "loop-content-numbered-agile.jsonl"  # Qwen1.5-1.8B-Chat: "4. Agile\n5. Agile\n..." (stopped at 196)
# A short clean agent turn: reasoning, a tool call and its result, an answer.
CLEAN = [
    {"type": "user", "text": "What is in notes.txt?"},
    {"type": "turn"},
    {"type": "reasoning", "text": "The user wants the file's contents, so I will read it first."},
    {"type": "tool_call", "name": "read_file", "args": {"path": "notes.txt"}},
    {"type": "tool_result", "ok": True, "output": "buy milk"},
    {"type": "content", "text": "notes.txt says: buy milk."},
    {"type": "finish", "reason": "stop"},
]


def test_text_is_cut_into_token_pieces_and_the_header_and_seqs_left_out():
    stored = [
        {"type": "session", "id": "s", "model": "m", "seq": 1},
        {"type": "turn", "seq": 2},
        {"type": "reasoning", "text": "abcdefghij", "seq": 3},
        {"type": "content", "text": "ok", "seq": 4},
        {"type": "tool_call", "name": "grep", "args": {"q": "x"}, "seq": 5},
    ]
    assert list(streamed_events(stored)) == [
        {"type": "turn"},
        {"type": "reasoning", "text": "abcd"},
        {"type": "reasoning", "text": "efgh"},
        {"type": "reasoning", "text": "ij"},
        {"type": "content", "text": "ok"},
        {"type": "tool_call", "name": "grep", "args": {"q": "x"}},
    ]


def streamed(session: Session) -> list[dict]:
    return list(streamed_events(event for _, event in session_event_stream(session.pk)))


@pytest.mark.django_db
def test_a_looping_session_streams_until_the_stop_as_a_guarded_producer_would():
    source = store_demo(AGILE)
    live = session_create_live(model=source.model)
    events = streamed(source)
    monitor = Monitor(live.profile, model=source.model)
    stop_at, stop = next(
        (n, found) for n, event in enumerate(events, 1) for found in monitor.feed(event) if found.action == "stop"
    )
    waits: list[float] = []

    answer = live_session_stream_stored(live_session_id=live.pk, source_session_id=source.pk, sleep=waits.append)

    assert answer.state == Session.State.STOPPED
    live.refresh_from_db()
    assert live.state == Session.State.STOPPED
    assert Event.objects.filter(session=live).count() == stop_at < len(events)  # nothing sent after the stop
    assert waits == [1 / 40] * (stop_at - 1)
    first = Detection.objects.filter(session=live).order_by("id").first()
    assert (first.detector, first.type, first.channel, first.start, first.at) == (
        stop.detector, stop.type, stop.channel, stop.start, stop.at
    )  # fmt: skip
    assert (first.type, first.channel, first.at) == ("block_cycle", "content", 196)


@pytest.mark.django_db
def test_a_clean_session_streams_to_its_end_and_is_closed():
    source = session_create_from_events(
        title="clean", model="gpt-4o", source_format="events", parser_version="1", events=CLEAN
    )
    live = session_create_live(model=source.model)

    answer = live_session_stream_stored(live_session_id=live.pk, source_session_id=source.pk, sleep=lambda _: None)

    assert answer.state == Session.State.CLOSED

    def pieces(event: dict) -> list[dict]:
        return [{"type": event["type"], "text": event["text"][i : i + 4]} for i in range(0, len(event["text"]), 4)]

    assert list(Event.objects.filter(session=live).order_by("seq").values_list("data", flat=True)) == [
        *CLEAN[:2], *pieces(CLEAN[2]), *CLEAN[3:5], *pieces(CLEAN[5]), CLEAN[6]
    ]  # fmt: skip
    assert not Detection.objects.filter(session=live).exists()


@pytest.mark.django_db
def test_a_reviewer_starts_it_from_the_session_page_and_lands_on_the_live_page(
    client, django_user_model, django_capture_on_commit_callbacks
):
    from loopguard_site.accounts.models import Role

    source = store_demo(AGILE)
    reviewer = member(django_user_model.objects.create_user("rita"), Role.REVIEWER)
    client.force_login(reviewer)
    assert f'action="/live/from/{source.pk}"' in client.get(source.get_absolute_url()).content.decode()

    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        answer = client.post(f"/live/from/{source.pk}")

    live = Session.objects.exclude(pk=source.pk).get()
    assert answer.status_code == 302 and answer["Location"] == f"/live/{live.pk}"
    assert (live.state, live.model, live.uploader, live.project_id) == (
        Session.State.LIVE, source.model, reviewer, source.project_id
    )  # fmt: skip
    assert live.title == f"#{source.pk} streamed live: {AGILE}"
    assert len(enqueued) == 1
    assert client.get(f"/live/from/{source.pk}").status_code == 405
    assert f'action="/live/from/{live.pk}"' not in client.get(live.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_a_viewer_may_not_start_one(client, django_user_model):
    from loopguard_site.accounts.models import Role

    source = store_demo(AGILE)
    client.force_login(member(django_user_model.objects.create_user("vic"), Role.VIEWER))
    assert client.post(f"/live/from/{source.pk}").status_code in (403, 404)
    assert Session.objects.count() == 1


@pytest.mark.django_db
def test_after_its_paced_part_a_long_session_goes_in_batches_without_waiting():
    source = store_demo(COIN_FLIPS)  # clean: no detector fires on it
    live = session_create_live(model=source.model)
    pieces = streamed(source)
    waits: list[float] = []

    answer = live_session_stream_stored(
        live_session_id=live.pk, source_session_id=source.pk, paced_seconds=3 / 40, sleep=waits.append
    )

    assert answer.state == Session.State.CLOSED
    assert waits == [1 / 40] * 2  # after the first two of the three paced messages
    assert len(pieces) - 3 > 256  # the rest in batches of 256 events and one of the others
    assert LiveStream.objects.get(session=live).acked_seq == 3 + math.ceil((len(pieces) - 3) / 256)
    assert list(Event.objects.filter(session=live).order_by("seq").values_list("data", flat=True)) == pieces
    assert not Detection.objects.filter(session=live).exists()


@pytest.mark.django_db
def test_a_loop_in_the_batched_part_stops_the_stream_at_its_batch():
    source = store_demo(AGILE)
    live = session_create_live(model=source.model)
    pieces = streamed(source)

    answer = live_session_stream_stored(
        live_session_id=live.pk, source_session_id=source.pk, paced_seconds=0, sleep=lambda _: None
    )

    assert answer.state == Session.State.STOPPED
    assert LiveStream.objects.get(session=live).acked_seq == 1  # one batch, the one that fired
    assert Event.objects.filter(session=live).count() == min(256, len(pieces))
    assert Detection.objects.filter(session=live, action="stop").first().at == 196
