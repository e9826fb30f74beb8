"""`POST /api/sessions/<id>/events`: the same ingest over HTTP (each batch
may be served by another process: the Monitor is pickled in the database,
and a process whose own Monitor is out of date catches up from there), the
REST state of the loop signal, and `loopguard scan`'s exit status on the
session exported through `GET /api/sessions/<id>/events`."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from django.db.models import F

from detector import monitor as monitor_module
from detector.monitor import Monitor
from loopguard_site.errors import FieldError
from loopguard_site.live import services
from loopguard_site.live.models import LiveStream
from loopguard_site.live.services import live_detection_dict, live_ingest
from loopguard_site.replay.models import Detection, SessionVerdict
from loopguard_site.transcripts.models import Event
from tests.shared_paths import REPO_ROOT

pytestmark = pytest.mark.django_db

HELLO = {"type": "content", "text": "Hello. "}
LOOPGUARD = Path(sys.executable).with_name("loopguard")  # the installed console script


def post(client, session, body) -> tuple[int, dict]:
    response = client.post(f"/api/sessions/{session.pk}/events", data=json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


def test_it_acknowledges_a_batch_and_answers_its_detections(live_session, producer, loop_events, loop_stop):
    client = producer.client()
    cut, end = loop_stop.seq - 10, loop_stop.seq + 20

    first = post(client, live_session, {"seq": 1, "events": loop_events[:cut]})
    again = post(client, live_session, {"seq": 1, "events": loop_events[:cut]})
    second = post(client, live_session, {"seq": 2, "events": loop_events[cut:end]})

    detection = live_detection_dict(Detection.objects.get(session=live_session))
    assert first == (200, {"ack": 1, "detections": [], "state": "live"})
    assert again == (200, {"ack": 1, "detections": [], "state": "live"})
    assert second == (200, {"ack": 2, "detections": [detection], "state": "stopped"})
    assert detection == {"id": detection["id"], "profile": "default", **loop_stop.detection, "event_seq": loop_stop.seq}
    assert Event.objects.filter(session=live_session).count() == end


def another_process_wrote(session) -> None:
    """What this process sees when another one stored the session's last
    message: a revision that is not its Monitor's."""
    LiveStream.objects.filter(session=session).update(revision=F("revision") + 1)


@pytest.mark.django_db(transaction=True)  # commits happen: this process keeps its Monitor between batches
@pytest.mark.parametrize("other_process", [False, True], ids=["one process", "each batch another process"])
def test_batches_equal_one_stream_whatever_the_cut(
    monkeypatch, live_session, producer, loop_events, loop_stop, other_process
):
    """Detections do not depend on how the stream was cut into messages, nor
    on which process stores each: a process without the current Monitor
    catches up from the last pickle (every 5 events here) and the events
    stored after it."""
    monkeypatch.setattr(services, "MONITOR_SAVE_EVENTS", 5)
    client = producer.client()
    stop = loop_stop.seq
    cuts = [0, 1, 7, 8, 11, stop - 1, stop, stop + 1, stop + 40, len(loop_events)]
    for seq, (start, end) in enumerate(zip(cuts, cuts[1:], strict=False), 1):
        if other_process:
            another_process_wrote(live_session)
        assert post(client, live_session, {"seq": seq, "events": loop_events[start:end]})[0] == 200

    monitor = Monitor("default", model=live_session.model)
    expected = [(n, d.to_dict()) for n, event in enumerate(loop_events, 1) for d in monitor.feed(event)]
    stored = [
        (row["event_seq"], row) for row in map(live_detection_dict, Detection.objects.filter(session=live_session))
    ]
    assert [
        (n, {k: v for k, v in row.items() if k not in ("id", "profile", "event_seq")}) for n, row in stored
    ] == expected
    # The session's verdict counts every batch's detections and keeps the first.
    verdict = SessionVerdict.objects.get(session=live_session, profile=live_session.profile)
    assert (verdict.looped, verdict.detection_count) == (True, len(expected))
    assert (verdict.first_detection_seq, verdict.first_detection_start) == (expected[0][0], expected[0][1]["start"])


@pytest.mark.parametrize("stored", ["not a pickle", "pickled by other detector code"])
def test_a_lost_or_stale_monitor_is_rebuilt_from_the_stored_events(
    live_session, producer, loop_events, loop_stop, stored, monkeypatch
):
    client = producer.client()
    cut, end = loop_stop.seq - 10, loop_stop.seq + 10
    post(client, live_session, {"seq": 1, "events": loop_events[:cut]})
    if stored == "not a pickle":
        LiveStream.objects.filter(session=live_session).update(monitor=b"not a pickle")
    else:
        # As an older LoopGuard left it: it loads as a Monitor, but its state may not fit the code.
        older = Monitor("default")
        for event in loop_events[:cut]:
            older.feed(event)
        older.ctx.events = 0  # would show in the count below if this state were used
        monkeypatch.setattr(monitor_module, "detector_code", lambda: "an older version")
        LiveStream.objects.filter(session=live_session).update(monitor=pickle.dumps(older), monitor_events=cut)
        monkeypatch.undo()
    another_process_wrote(live_session)

    status, answer = post(client, live_session, {"seq": 2, "events": loop_events[cut:end]})

    assert (status, answer["state"], [d["event_seq"] for d in answer["detections"]]) == (
        200,
        "stopped",
        [loop_stop.seq],
    )
    monitor = pickle.loads(bytes(LiveStream.objects.get(session=live_session).monitor))
    characters = sum(len(event["text"]) for event in loop_events[:end] if event["type"] == "content")
    assert (monitor.ctx.events, monitor.ctx.offsets["content"], monitor.stopped) == (end, characters, True)


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"seq": 2, "events": [HELLO]}, 400, {"error": "seq 2 leaves a gap: the next message is 1", "field": "seq"}),
        ({"seq": 1, "events": [{"type": "nope"}]}, 400,
         {"error": "events[0].type: unknown event type 'nope'", "field": "events[0].type"}),
        ({"events": [HELLO]}, 400, {"error": "seq must be a whole number from 1 on", "field": "seq"}),
    ],
)  # fmt: skip
def test_it_refuses_a_bad_batch_naming_the_field(live_session, producer, body, status, error):
    assert post(producer.client(), live_session, body) == (status, {**error, "line": None})
    assert Event.objects.filter(session=live_session).count() == 0


def test_it_refuses_other_users_and_closed_sessions(live_session, producer, outsider):
    outsider_answer = post(outsider.client(), live_session, {"seq": 1, "events": [HELLO]})
    closed = post(producer.client(), live_session, {"close": True})
    closed_again = post(producer.client(), live_session, {"close": True})
    after = post(producer.client(), live_session, {"seq": 1, "events": [HELLO]})

    pk = live_session.pk
    assert outsider_answer == (403, {"error": f"session {pk} is not yours to stream into", "field": None, "line": None})
    assert closed == closed_again == (200, {"ack": 0, "detections": [], "state": "closed"})
    assert after == (409, {"error": f"session {pk} is closed: it takes no events", "field": None, "line": None})


def test_get_still_lists_the_stored_events(live_session, producer):
    client = producer.client()
    post(client, live_session, {"seq": 1, "events": [{"type": "turn"}, HELLO]})

    response = client.get(f"/api/sessions/{live_session.pk}/events")

    assert response.json() == {"events": [{"seq": 1, "type": "turn"}, {"seq": 2, **HELLO}], "next": None}


def test_the_rest_api_state_follows_the_loop_signal(live_session, producer, loop_events):
    client = producer.client()
    state = []

    def step(seq: int, events: list[dict]) -> None:
        post(client, live_session, {"seq": seq, "events": events})
        state.append(client.get(f"/api/sessions/{live_session.pk}").json()["state"])

    step(1, [{"type": "turn", "t": 0}, {"type": "content", "text": "Working on it. ", "t": 0.5}])
    # 700 s of silence while working: the health detector's `stream_stalled`, a warn
    step(2, [{"type": "content", "text": "Still here. ", "t": 700.5}])
    step(3, [{"type": "turn", "t": 701}, *loop_events[1:]])

    actions = list(Detection.objects.filter(session=live_session).values_list("type", "action"))
    assert actions == [("stream_stalled", "warn"), ("block_cycle", "stop")]
    assert state == ["live", "looping", "stopped"]


def test_scan_exits_1_on_the_looping_session_exported_as_events(live_session, producer, loop_events, loop_stop):
    client = producer.client()
    post(client, live_session, {"seq": 1, "events": loop_events[: loop_stop.seq]})
    exported = client.get(f"/api/sessions/{live_session.pk}/events").json()
    assert exported["next"] is None
    jsonl = "".join(json.dumps(event) + "\n" for event in exported["events"])

    scan = subprocess.run(
        [LOOPGUARD, "scan", "--json", "-"],
        input=jsonl, capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
    )  # fmt: skip

    assert scan.returncode == 1, scan.stderr
    report = json.loads(scan.stdout)
    stored = live_detection_dict(Detection.objects.get(session=live_session))
    first = {k: v for k, v in stored.items() if k not in ("id", "profile", "event_seq")}
    assert (report["profile"], report["detections"]) == ("default", [first])


def test_a_session_deleted_while_streaming_answers_404(live_session, producer):
    client = producer.client()
    post(client, live_session, {"seq": 1, "events": [HELLO]})
    pk = live_session.pk
    live_session.delete()

    with pytest.raises(FieldError) as raised:
        live_ingest(session_id=pk, seq=2, events=[HELLO])

    assert (str(raised.value), raised.value.status) == (f"no session {pk}", 404)
    answer = client.post(
        f"/api/sessions/{pk}/events", data={"seq": 2, "events": [HELLO]}, content_type="application/json"
    )
    assert (answer.status_code, answer.json()["error"]) == (404, f"no session with id {pk}")
