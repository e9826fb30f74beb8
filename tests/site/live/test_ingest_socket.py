"""`/ws/ingest/<id>` against the real ASGI application, PostgreSQL and Redis:
acknowledgements, resume after a reconnect (nothing lost, nothing doubled),
bad messages, the loop signal pushed to the producer, takeover and close."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from detector.live_client import LiveSession
from loopguard_site.live import ingest_worker
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import TIMEOUT, connect_refused, connected, ingest_socket, receive

pytestmark = pytest.mark.django_db(transaction=True)

HELLO = {"type": "content", "text": "Hello. "}


def stored(session: Session) -> list[tuple[int, dict]]:
    return list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "data"))


def test_it_resumes_at_zero_and_acknowledges_each_message_once_stored(live_services, live_session, producer):
    async def scenario() -> list[dict]:
        socket = ingest_socket(live_session, producer)
        assert await socket.connect(timeout=TIMEOUT) == (True, None)
        messages = [await socket.receive_json_from(timeout=TIMEOUT)]
        await socket.send_json_to({"seq": 1, "event": {"type": "turn"}})
        messages.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.send_json_to({"seq": 2, "events": [HELLO, {"type": "content", "text": "World."}]})
        messages += await receive(socket, 1)
        await socket.disconnect()
        return messages

    assert async_to_sync(scenario)() == [{"resume": 0}, {"ack": 1}, {"ack": 2}]
    assert stored(live_session) == [
        (1, {"type": "turn"}),
        (2, HELLO),
        (3, {"type": "content", "text": "World."}),
    ]
    live_session.refresh_from_db()
    assert (live_session.event_count, live_session.state) == (3, "live")


def test_it_resumes_after_a_reconnect_with_nothing_lost_and_nothing_doubled(live_services, live_session, producer):
    events = [{"type": "content", "text": f"part {n}. "} for n in range(1, 9)]

    async def scenario() -> list:
        first = ingest_socket(live_session, producer)
        await first.connect(timeout=TIMEOUT)
        seen = [await first.receive_json_from(timeout=TIMEOUT)]
        for seq in (1, 2, 3):
            await first.send_json_to({"seq": seq, "event": events[seq - 1]})
            seen.append(await first.receive_json_from(timeout=TIMEOUT))
        # seq 4 goes out, and the connection drops before its ack is read
        await first.send_json_to({"seq": 4, "event": events[3]})
        await first.disconnect()
        second = ingest_socket(live_session, producer)
        await second.connect(timeout=TIMEOUT)
        resume = await second.receive_json_from(timeout=TIMEOUT)
        seen.append(resume)
        # a producer that cannot know whether 4 arrived sends it again: acked again, stored once
        for seq in range(resume["resume"] - 1, 9):
            await second.send_json_to({"seq": seq, "event": events[seq - 1]})
            seen.append(await second.receive_json_from(timeout=TIMEOUT))
        await second.disconnect()
        return seen

    seen = async_to_sync(scenario)()

    resume = seen[4]["resume"]
    # The disconnect may beat seq 4 to the server or not; either way resume says what was stored.
    assert resume in (3, 4)
    assert seen[:4] == [{"resume": 0}, {"ack": 1}, {"ack": 2}, {"ack": 3}]
    assert seen[5:] == [{"ack": seq} for seq in range(resume - 1, 9)]
    assert stored(live_session) == [(n, event) for n, event in enumerate(events, 1)]


def test_it_resumes_exactly_at_the_last_acknowledged_message(live_services, live_session, producer):
    async def scenario() -> tuple:
        first = ingest_socket(live_session, producer)
        await connected(first)
        for seq in range(1, 6):
            pair = [{"type": "content", "text": f"step {seq}a. "}, {"type": "content", "text": f"step {seq}b. "}]
            await first.send_json_to({"seq": seq, "events": pair})
            await first.receive_json_from(timeout=TIMEOUT)
        await first.disconnect()
        second = ingest_socket(live_session, producer)
        await second.connect(timeout=TIMEOUT)
        resume = await second.receive_json_from(timeout=TIMEOUT)
        nothing_else = await second.receive_nothing(timeout=0.2)
        await second.disconnect()
        return resume, nothing_else

    assert async_to_sync(scenario)() == ({"resume": 5}, True)
    assert Event.objects.filter(session=live_session).count() == 10


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{not json", {"error": "the message is not valid JSON: Expecting property name enclosed in double quotes: "
                                "line 1 column 2 (char 1)", "field": None, "seq": None}),
        ('\ufeff{"seq": 1, "event": {"type": "turn"}}',
         {"error": "the message is not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig): "
                   "line 1 column 1 (char 0)", "field": None, "seq": None}),
        ('{"seq": 1, "event": {"type": "content", "text": "x", "t": NaN}}',
         {"error": "the message is not valid JSON: NaN is not JSON", "field": None, "seq": None}),
        ('{"seq": 1, "event": {"type": "content"}}',
         {"error": "event.text: field 'text' of a content event must be a string", "field": "event.text", "seq": 1}),
        ('{"seq": 1, "events": [{"type": "turn"}, {"type": "tool_call", "name": "ls", "args": []}]}',
         {"error": "events[1].args: field 'args' of a tool_call event must be an object", "field": "events[1].args",
          "seq": 1}),
        ('{"seq": 3, "event": {"type": "turn"}}',
         {"error": "seq 3 leaves a gap: the next message is 1", "field": "seq", "seq": 3}),
    ],
)  # fmt: skip
def test_it_answers_a_bad_message_with_an_error_and_stays_usable(live_services, live_session, producer, text, error):
    async def scenario() -> list[dict]:
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        await socket.send_to(text_data=text)
        answers = [await socket.receive_json_from(timeout=TIMEOUT)]
        await socket.send_json_to({"seq": 1, "event": HELLO})
        answers.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.disconnect()
        return answers

    assert async_to_sync(scenario)() == [error, {"ack": 1}]
    assert stored(live_session) == [(1, HELLO)]


def test_it_pushes_the_stop_to_the_producer_the_moment_it_fires(
    live_services, live_session, producer, loop_events, loop_stop
):
    async def scenario() -> list[tuple[int, dict]]:
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        answers = []
        for seq, event in enumerate(loop_events, 1):
            await socket.send_json_to({"seq": seq, "event": event})
            while "ack" not in (answer := await socket.receive_json_from(timeout=TIMEOUT)):
                answers.append((seq, answer))
            if "detection" in (answers[-1][1] if answers else {}):
                break  # the producer aborts its model stream here
        await socket.disconnect()
        return answers

    answers = async_to_sync(scenario)()

    # exactly what the same events fed whole to a Monitor of the profile find
    row = Detection.objects.get(session=live_session)
    expected = {"id": row.pk, "profile": "default", **loop_stop.detection, "event_seq": loop_stop.seq}
    assert answers == [(loop_stop.seq, {"detection": expected})]
    live_session.refresh_from_db()
    assert (live_session.state, live_session.event_count) == ("stopped", loop_stop.seq)


def test_it_repeats_the_stop_after_a_reconnect(live_services, live_session, producer, loop_events, loop_stop):
    async def scenario() -> list[dict]:
        first = ingest_socket(live_session, producer)
        await connected(first)
        await first.send_json_to({"seq": 1, "events": loop_events[: loop_stop.seq]})
        await receive(first, 2)
        await first.disconnect()
        second = ingest_socket(live_session, producer)
        await second.connect(timeout=TIMEOUT)
        messages = await receive(second, 2)
        await second.disconnect()
        return messages

    messages = async_to_sync(scenario)()

    row = Detection.objects.get(session=live_session)
    assert [list(m) for m in messages] == [["resume"], ["detection"]]
    assert messages[0] == {"resume": 1}
    assert (messages[1]["detection"]["id"], messages[1]["detection"]["action"]) == (row.pk, "stop")


def test_it_closes_the_session_on_close_and_refuses_events_after(live_services, live_session, producer):
    async def scenario() -> tuple:
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        await socket.send_json_to({"seq": 1, "event": HELLO})
        await socket.receive_json_from(timeout=TIMEOUT)
        await socket.send_json_to({"close": True})
        answers = [await socket.receive_json_from(timeout=TIMEOUT), await socket.receive_output(timeout=TIMEOUT)]
        await socket.disconnect()
        again = await connect_refused(ingest_socket(live_session, producer))
        return answers, again

    answers, again = async_to_sync(scenario)()

    assert answers == [{"state": "closed"}, {"type": "websocket.close", "code": 1000}]
    assert again == (True, 4409)
    live_session.refresh_from_db()
    assert (live_session.state, live_session.event_count) == ("closed", 1)


def test_a_close_riding_on_events_stores_them_first(live_services, live_session, producer):
    async def scenario() -> list:
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        await socket.send_json_to({"seq": 1, "events": [HELLO, {"type": "finish", "reason": "stop"}], "close": True})
        answers = [await socket.receive_json_from(timeout=TIMEOUT) for _ in range(2)]
        await socket.disconnect()
        return answers

    assert async_to_sync(scenario)() == [{"ack": 1}, {"state": "closed"}]
    assert stored(live_session) == [(1, HELLO), (2, {"type": "finish", "reason": "stop"})]


def test_a_new_producer_takes_over_and_the_older_socket_is_closed(live_services, live_session, producer):
    async def scenario() -> tuple:
        first = ingest_socket(live_session, producer)
        await connected(first)
        await first.send_json_to({"seq": 1, "event": HELLO})
        await first.receive_json_from(timeout=TIMEOUT)
        second = ingest_socket(live_session, producer)
        await second.connect(timeout=TIMEOUT)
        resume = await second.receive_json_from(timeout=TIMEOUT)
        first_closed = await first.receive_output(timeout=TIMEOUT)
        await first.disconnect()
        await second.send_json_to({"seq": 2, "event": HELLO})
        ack = await second.receive_json_from(timeout=TIMEOUT)
        await second.disconnect()
        return resume, first_closed, ack

    assert async_to_sync(scenario)() == ({"resume": 1}, {"type": "websocket.close", "code": 4409}, {"ack": 2})
    assert stored(live_session) == [(1, HELLO), (2, HELLO)]


def test_two_producers_sending_the_same_seq_store_it_once(live_services, live_session, producer):
    """Messages of one session are serialized by a row lock: whichever comes
    second is a duplicate, acknowledged and not stored."""

    async def scenario() -> list:
        sockets = [ingest_socket(live_session, producer) for _ in range(2)]
        for socket in sockets:
            await connected(socket)
        # the first socket was replaced; the server may or may not read a frame sent meanwhile
        await sockets[1].send_json_to({"seq": 1, "event": HELLO})
        answer = await sockets[1].receive_json_from(timeout=TIMEOUT)
        await sockets[1].send_json_to({"seq": 1, "event": HELLO})
        again = await sockets[1].receive_json_from(timeout=TIMEOUT)
        for socket in sockets:
            await socket.disconnect()
        return [answer, again]

    assert async_to_sync(scenario)() == [{"ack": 1}, {"ack": 1}]
    assert stored(live_session) == [(1, HELLO)]


@pytest.mark.parametrize(
    ("case", "code"),
    [("anonymous", 4401), ("outsider", 4403), ("missing", 4404), ("stored", 4409)],
)
def test_it_refuses_who_may_not_stream_into_the_session(live_services, live_session, producer, outsider, case, code):
    from channels.testing import WebsocketCommunicator

    from loopguard_site.asgi import application

    path, headers = f"/ws/ingest/{live_session.pk}", producer.headers
    if case == "anonymous":
        headers = []
    elif case == "outsider":
        headers = outsider.headers
    elif case == "missing":
        path = f"/ws/ingest/{live_session.pk + 1000}"
    else:
        stored_session = session_create_from_events(
            title="upload", model="", source_format="events", parser_version="1", events=[HELLO],
            uploader=producer.user,
        )  # fmt: skip
        path = f"/ws/ingest/{stored_session.pk}"

    async def scenario() -> tuple:
        return await connect_refused(WebsocketCommunicator(application, path, headers=headers))

    assert async_to_sync(scenario)() == (True, code)


def test_a_stream_stored_by_two_processes_in_turn_fires_as_one_monitor(
    lab, live_session, producer, loop_events, loop_stop
):
    """This process stores the first part; a lab process takes the producer
    over for the second (it catches up from the database); this process
    stores the rest: its own Monitor is out of date and must catch up too.
    The stop fires where the whole stream fed to one Monitor fires it."""
    server = lab()
    cut, end = loop_stop.seq - 15, loop_stop.seq - 5

    async def first_part() -> list[dict]:
        socket = ingest_socket(live_session, producer)
        seen = [await connected(socket)]
        await socket.send_json_to({"seq": 1, "events": loop_events[:cut]})
        seen.append(await socket.receive_json_from(timeout=TIMEOUT))
        await socket.disconnect()
        return seen

    async def last_part() -> list[dict]:
        socket = ingest_socket(live_session, producer)
        seen = [await connected(socket)]
        await socket.send_json_to({"seq": 3, "events": loop_events[end:]})
        seen += await receive(socket, 2)
        await socket.disconnect()
        return seen

    first = async_to_sync(first_part)()
    other = LiveSession(server.url, producer.token, session_id=live_session.pk)
    other.send(loop_events[cut:end])
    other.flush()
    other.disconnect()
    last = async_to_sync(last_part)()

    row = Detection.objects.get(session=live_session)
    expected = {"id": row.pk, "profile": "default", **loop_stop.detection, "event_seq": loop_stop.seq}
    assert (first, other.resumes, other.acked) == ([{"resume": 0}, {"ack": 1}], [1], 2)
    assert last == [{"resume": 2}, {"detection": expected}, {"ack": 3}]
    assert stored(live_session) == list(enumerate(loop_events, 1))


def test_a_message_the_server_fails_ends_the_socket_and_a_close_behind_it_closes_nothing(
    live_services, live_session, producer, monkeypatch
):
    store = ingest_worker.live_ingest_batch

    def fail_seq_2(requests):
        if any(request.seq == 2 for request in requests):
            raise RuntimeError("the database went away")
        return store(requests)

    monkeypatch.setattr(ingest_worker, "live_ingest_batch", fail_seq_2)

    async def scenario() -> list:
        socket = ingest_socket(live_session, producer)
        await connected(socket)
        await socket.send_json_to({"seq": 1, "event": HELLO})
        answers = [await socket.receive_json_from(timeout=TIMEOUT)]
        # The close waits for message 2's answer: a failure, after which the
        # producer resends message 2 on a new socket, so the close must not act.
        await socket.send_json_to({"seq": 2, "event": HELLO})
        await socket.send_json_to({"close": True})
        answers.append(await socket.receive_output(timeout=TIMEOUT))
        assert await socket.receive_nothing(timeout=0.3)
        await socket.disconnect()
        return answers

    assert async_to_sync(scenario)() == [{"ack": 1}, {"type": "websocket.close", "code": 4500}]
    live_session.refresh_from_db()
    assert (live_session.state, live_session.event_count) == ("live", 1)
    assert list(Event.objects.filter(session=live_session).values_list("seq", flat=True)) == [1]
