"""`LiveSession` and the stream wrappers against a real lab process (full
mode: PostgreSQL, Redis): a looping corpus row raises `LoopDetected` at the
message that completes the loop, over the socket and over HTTP; a connection
cut mid-stream (by a TCP relay between client and lab) is resumed from the
lab's `resume` number with nothing lost and nothing doubled."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

import pytest

from detector.config import builtin_config
from detector.live_client import LiveSession, LiveSessionError
from detector.loop_signal import LoopDetected
from detector.monitor import Monitor
from detector.stream_guard import guard_openai_stream
from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.models import Event, Session
from tests.api_stubs import LOOP_FIXTURE, fixture_row
from tests.lab_server import lab  # noqa: F401 - the fixture
from tests.members import member, project_token
from tests.openai_stub import corpus_row, openai_chunks, reference_stop, row_events

pytestmark = pytest.mark.django_db(transaction=True)

LOOP_ROW = "ae-qwen15-1.8b-agile-numbered"  # "4. Agile\n5. Agile\n...", Qwen1.5-1.8B-Chat
NORMAL_ROW = "ae-gpt4turbo-sudoku-grids"
BATCH = 20  # events per message where the test is not about single events


@pytest.fixture(scope="module")
def loop() -> tuple[list[dict], int, dict]:
    """The looping row's events, the index of the one the default profile
    stops at, and the detection as the lab reports it (id aside)."""
    events = row_events(corpus_row(LOOP_ROW))
    index, detection = reference_stop(events)
    return events, index, {"profile": "default", **detection, "event_seq": index + 1}


def batches(events: list[dict]) -> list[list[dict]]:
    return [events[i : i + BATCH] for i in range(0, len(events), BATCH)]


@pytest.fixture
def token(django_user_model) -> str:
    return project_token(user=member(django_user_model.objects.create_user("producer")), name="tests")[1]


def stored(session_id: int) -> list[dict]:
    return list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True))


def without_id(detection: dict) -> dict:
    return {key: value for key, value in detection.items() if key != "id"}


class Relay:
    """A TCP relay to `target` that can cut every connection through it at
    once (as a network failure would) and keeps accepting new ones."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.answers_to_drop = 0  # connections whose answer is read from the lab and thrown away
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, server]
                drop, self.answers_to_drop = self.answers_to_drop > 0, max(self.answers_to_drop - 1, 0)
            threading.Thread(target=self._pipe, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, drop), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, drop: bool = False) -> None:
        try:
            while data := source.recv(65536):
                if not drop:
                    sink.sendall(data)
        except OSError:
            pass  # cut
        for each in (source, sink):
            try:
                each.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        with self.lock:
            cut, self.sockets = self.sockets, []
        for each in cut:
            try:
                each.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its pipe
            each.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()


@pytest.fixture
def relay(lab):  # noqa: F811 - the imported fixture
    server = lab()
    host, port = server.url.removeprefix("http://").split(":")
    relay = Relay((host, int(port)))
    yield relay
    relay.close()


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_looping_stream_raises_loop_detected_at_the_message_that_completes_the_loop(lab, token, loop, transport):  # noqa: F811
    server = lab()
    events, index, stop = loop
    live = LiveSession(server.url, token, model="Qwen1.5-1.8B-Chat", transport=transport, window=1, linger=0)
    sent = 0

    with pytest.raises(LoopDetected) as caught:
        for event in events:
            sent += 1
            live.send(event)

    # one event per message: message N holds event N - 1
    assert sent == index + 1 and live.acked == index + 1 and live.pending == {}
    assert without_id(caught.value.detection) == stop
    assert (caught.value.action, caught.value.origin) == ("stop", "server")
    assert without_id(live.detections[-1]) == stop and all(d["action"] != "stop" for d in live.detections[:-1])
    with pytest.raises(LoopDetected):  # sticky: the producer must abort
        live.send(events[index + 1])
    session = Session.objects.get(pk=live.session_id)
    assert (session.state, session.model, session.event_count) == ("stopped", "Qwen1.5-1.8B-Chat", index + 1)
    assert stored(live.session_id) == events[: index + 1]
    assert Detection.objects.get(session=session, action="stop").pk == caught.value.detection["id"]
    live.disconnect()


def test_a_connection_cut_after_an_acknowledgement_resumes_exactly_there(relay, token):
    events = row_events(corpus_row(NORMAL_ROW))
    messages = batches(events)
    live = LiveSession(relay.url, token, model="gpt4_1106_preview", title="cut", linger=0)
    for message in messages[:10]:
        live.send(message)
    live.flush()
    relay.cut()
    for message in messages[10:]:
        live.send(message)
    live.close()

    assert live.resumes == [0, 10]
    assert live.acked == len(messages) and live.detections == []
    assert stored(live.session_id) == events  # nothing lost, nothing doubled
    session = Session.objects.get(pk=live.session_id)
    assert (session.state, session.title, session.event_count) == ("closed", "cut", len(events))


def test_a_connection_cut_with_messages_in_flight_loses_and_doubles_nothing(relay, token):
    events = row_events(corpus_row(NORMAL_ROW))
    messages = batches(events)
    live = LiveSession(relay.url, token, window=64, linger=0)
    for message in messages[:20]:
        live.send(message)
    acked_before_cut = live.acked
    relay.cut()
    for message in messages[20:]:
        live.send(message)
    live.flush()

    assert live.resumes[0] == 0 and acked_before_cut <= live.resumes[1] <= 20
    assert live.acked == len(messages) and live.pending == {}
    assert stored(live.session_id) == events
    live.disconnect()


def test_an_http_answer_lost_after_the_lab_stored_the_message_is_posted_again_and_stored_once(relay, token):
    events = row_events(corpus_row(NORMAL_ROW))
    live = LiveSession(relay.url, token, transport="http", linger=0)
    live.send(events[:3])
    relay.answers_to_drop = 1  # the lab stores message 2; its answer never reaches the client
    live.send(events[3:6])
    live.send(events[6:9])

    assert relay.answers_to_drop == 0  # the drop happened
    assert (live.acked, live.pending) == (3, {})
    assert stored(live.session_id) == events[:9]


def test_an_existing_session_is_continued_where_the_lab_left_it(lab, token):  # noqa: F811
    server = lab()
    events = row_events(corpus_row(NORMAL_ROW))
    first = LiveSession(server.url, token, linger=0)
    for event in events[:5]:
        first.send(event)
    first.flush()
    first.disconnect()
    second = LiveSession(server.url, token, session_id=first.session_id)
    second.send(events[5:10])
    second.flush()

    assert second.resumes == [5] and second.acked == 6
    assert stored(first.session_id) == events[:10]
    second.disconnect()


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_send_retried_by_the_caller_after_it_raised_stores_the_message_once(relay, token, transport):
    events = row_events(corpus_row(NORMAL_ROW))
    live = LiveSession(relay.url, token, transport=transport, retries=0, window=1, linger=0)
    live.send(events[:3])
    if transport == "http":
        relay.answers_to_drop = 1  # the lab stores message 2; its answer never reaches the client
    else:
        relay.cut()  # message 2 goes nowhere: the socket is gone
    with pytest.raises(LiveSessionError):
        live.send(events[3:6])
    live.send(events[3:6])  # the caller tries again: the same message, not a second one
    live.send(events[6:9])
    live.flush()

    assert (live.acked, live.pending) == (3, {})
    assert stored(live.session_id) == events[:9]
    live.disconnect()


@pytest.mark.parametrize(("transport", "status"), [("ws", 4401), ("http", 401)])
def test_a_wrong_token_is_a_clear_error(lab, token, transport, status):  # noqa: F811
    server = lab()
    session_id = LiveSession(server.url, token, transport="http").session_id
    intruder = LiveSession(server.url, "lg_wrong", session_id=session_id, transport=transport, retries=0, linger=0)

    with pytest.raises(LiveSessionError) as caught:
        intruder.send({"type": "turn"})

    assert caught.value.status == status


def test_the_openai_wrapper_raises_when_the_lab_says_stop(lab, token, loop):  # noqa: F811
    server = lab()
    _, index, stop = loop
    row = corpus_row(LOOP_ROW)
    chunks = openai_chunks(row)
    live = LiveSession(server.url, token, model=row["model"], window=1, linger=0)
    received = []

    with pytest.raises(LoopDetected) as caught:
        for chunk in guard_openai_stream(chunks, live=live):
            received.append(chunk)

    # chunk 0 (the role) is message 1 (a turn event), chunk k (delta k) message k + 1
    assert received == chunks[: index + 1]
    assert caught.value.origin == "server"
    assert without_id(caught.value.detection) == stop
    assert Session.objects.get(pk=live.session_id).state == "stopped"
    live.disconnect()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"transport": "carrier-pigeon"}, "transport must be one of ('ws', 'http'), not 'carrier-pigeon'"),
        ({"window": 0}, "window must be at least 1"),
        ({"linger": -1}, "linger must be at least 0 and max_batch at least 1"),
        ({"max_batch": 0}, "linger must be at least 0 and max_batch at least 1"),
    ],
)
def test_bad_options_are_refused_before_anything_is_sent(options, message):
    with pytest.raises(ValueError) as caught:
        LiveSession("http://127.0.0.1:9", "lg_x", session_id=1, **options)
    assert str(caught.value) == message


def test_the_socket_transport_without_websockets_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "websockets.exceptions", None)  # as if the package were missing
    live = LiveSession("http://127.0.0.1:9", "lg_x", session_id=1, linger=0)

    with pytest.raises(LiveSessionError) as caught:
        live.send({"type": "turn"})

    assert str(caught.value) == (
        "the WebSocket transport needs the `websockets` package (pip install websockets); or use transport='http'"
    )
    assert live.pending == {}  # nothing was numbered: the lab's resume is not known


def test_the_async_openai_wrapper_raises_when_the_lab_says_stop(lab, token, loop):  # noqa: F811
    server = lab()
    _, index, stop = loop
    chunks = openai_chunks(corpus_row(LOOP_ROW))
    live = LiveSession(server.url, token, window=1, linger=0)

    async def upstream():
        for item in chunks:
            yield item

    async def scenario() -> tuple[list, LoopDetected]:
        received = []
        try:
            async for item in guard_openai_stream(upstream(), live=live):
                received.append(item)
        except LoopDetected as signal:
            return received, signal
        raise AssertionError("no LoopDetected")

    received, signal = asyncio.run(scenario())

    assert received == chunks[: index + 1]
    assert (without_id(signal.detection), signal.origin) == (stop, "server")
    live.disconnect()


def test_a_guarded_stream_of_single_characters_reaches_the_lab_in_few_messages_and_stops_where_it_would_alone(
    lab,  # noqa: F811
    token,
):
    server = lab()
    row = fixture_row(LOOP_FIXTURE)
    chunks = openai_chunks(row, size=1)  # one character a chunk, as a token-by-token stream
    profile = builtin_config().select(model=row["model"]).name
    index, stop = reference_stop(row_events(row, size=1), profile)

    def guarded_run(live: LiveSession | None) -> tuple[list, LoopDetected]:
        received = []
        with pytest.raises(LoopDetected) as caught:
            for chunk in guard_openai_stream(chunks, monitor=Monitor(profile), live=live):
                received.append(chunk)
        return received, caught.value

    alone, alone_signal = guarded_run(None)
    live = LiveSession(server.url, token, model=row["model"])  # the default linger and batch size
    watched, signal = guarded_run(live)

    assert alone == watched == chunks[: index + 1]  # the local Monitor stops at once either way
    assert (signal.origin, signal.detection) == ("local", alone_signal.detection) and signal.detection == stop
    assert live.acked * 20 <= index + 1 and live.pending == {}  # 20 or more events a message
    assert stored(live.session_id) == row_events(row, size=1)[: index + 1]  # the waiting batch flushed at the stop
    assert without_id(live.stop) == {"profile": profile, **stop, "event_seq": index + 1}  # the lab's detection came
    assert Session.objects.get(pk=live.session_id).state == "stopped"
    live.disconnect()
