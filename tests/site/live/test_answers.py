"""`producer_answer`: the frames a producer socket sends for its messages
that one batch stored, in both versions of the acknowledgements: which seqs
each ack covers for messages stored together and apart, detections before
the ack that covers them, a refusal after the ack of the messages before it.
Protocol 3's ack held across batches unless a message asks for it. And
`acks_protocol`, which version a socket asked for."""

from __future__ import annotations

import json

import pytest

from loopguard_site.errors import FieldError
from loopguard_site.live.answers import CLOSE_FAILED, CLOSE_NORMAL, Answer, producer_answer
from loopguard_site.live.protocol import acks_protocol
from loopguard_site.live.services import IngestRequest, IngestResult

HELLO = {"type": "content", "text": "Hello"}
STOP = {"id": 9, "detector": "text_loop", "action": "stop", "event_seq": 5}
GAP = FieldError("seq 7 leaves a gap: the next message is 6", field="seq")


def request(seq: int, close: bool = False, ack_now: bool = False) -> IngestRequest:
    return IngestRequest(session_id=1, seq=seq, events=[HELLO], close=close, ack_now=ack_now)


def stored(seq: int, *detections: dict, state: str = "live") -> IngestResult:
    return IngestResult(ack=seq, state=state, detections=list(detections))


def frames(answer: Answer) -> tuple[list[dict], int | None]:
    return [json.loads(text) for text in answer.texts], answer.close_code


@pytest.mark.parametrize(
    ("batches", "upto", "expected"),
    [
        # stored together: version 2 acknowledges the three with one ack naming the highest
        ([[1, 2, 3]], True, [[{"ack": 3}]]),
        ([[1, 2, 3]], False, [[{"ack": 1}, {"ack": 2}, {"ack": 3}]]),
        # stored apart: one ack a batch, each naming its batch's highest
        ([[1], [2, 3], [4]], True, [[{"ack": 1}], [{"ack": 3}], [{"ack": 4}]]),
        ([[1], [2, 3], [4]], False, [[{"ack": 1}], [{"ack": 2}, {"ack": 3}], [{"ack": 4}]]),
    ],
)
def test_an_ack_covers_the_messages_stored_together(batches, upto, expected):
    answers = [producer_answer([(request(seq), stored(seq)) for seq in batch], acks_upto=upto) for batch in batches]

    assert [frames(answer) for answer in answers] == [(texts, None) for texts in expected]


def test_an_ack_rides_on_the_answer_to_the_messages_in_flight_one_batch_at_most():
    def answered(seqs: list[int], held: int, more_coming: bool) -> Answer:
        return producer_answer(
            [(request(seq), stored(seq)) for seq in seqs], acks_upto=True, held=held, more_coming=more_coming
        )

    first = answered([1, 2], held=0, more_coming=True)  # held: message 3 is in flight
    second = answered([3], held=first.held, more_coming=True)  # sent: the ack of 2 waited one batch already
    third = answered([4], held=second.held, more_coming=True)
    last = answered([5], held=third.held, more_coming=False)  # nothing in flight: sent

    assert [(frames(answer), answer.held) for answer in (first, second, third, last)] == [
        (([], None), 2),
        (([{"ack": 3}], None), 0),
        (([], None), 4),
        (([{"ack": 5}], None), 0),
    ]
    # the first protocol acknowledges each message at once
    assert frames(producer_answer([(request(1), stored(1))], acks_upto=False, more_coming=True)) == (
        [{"ack": 1}],
        None,
    )


def test_a_held_ack_comes_before_a_refusal_and_before_the_end_of_the_socket():
    refused = producer_answer([(request(7), GAP)], acks_upto=True, held=6, more_coming=True)
    failed = producer_answer([(request(7), ConnectionError("redis gone"))], acks_upto=True, held=6)
    closed = producer_answer([(request(7, close=True), stored(7, state="closed"))], acks_upto=True, held=6)

    assert frames(refused) == ([{"ack": 6}, {"error": str(GAP), "field": "seq", "seq": 7}], None)
    assert refused.held == 0
    assert frames(failed) == ([{"ack": 6}], CLOSE_FAILED)
    assert frames(closed) == ([{"ack": 7}, {"state": "closed"}], CLOSE_NORMAL)


def test_a_duplicate_stored_again_does_not_lower_the_ack():
    outcomes = [(request(4), stored(4)), (request(2), IngestResult(ack=2, state="live", duplicate=True))]

    assert frames(producer_answer(outcomes, acks_upto=True)) == ([{"ack": 4}], None)


@pytest.mark.parametrize(
    ("upto", "expected"),
    [
        (True, [{"detection": STOP}, {"ack": 2}]),
        (False, [{"ack": 1}, {"detection": STOP}, {"ack": 2}]),
    ],
)
def test_detections_come_before_the_ack_that_covers_their_message(upto, expected):
    outcomes = [(request(1), stored(1)), (request(2), stored(2, STOP, state="stopped"))]

    assert frames(producer_answer(outcomes, acks_upto=upto)) == (expected, None)


def test_a_refusal_comes_after_the_ack_of_the_messages_before_it():
    outcomes = [(request(5), stored(5)), (request(6), stored(6)), (request(7), GAP), (request(8), GAP)]

    texts, code = frames(producer_answer(outcomes, acks_upto=True))

    assert texts == [
        {"ack": 6},
        {"error": str(GAP), "field": "seq", "seq": 7},
        {"error": str(GAP), "field": "seq", "seq": 8},
    ]
    assert code is None


def test_a_message_the_server_failed_ends_the_socket_after_acknowledging_those_before_it():
    outcomes = [(request(1), stored(1)), (request(2), ConnectionError("redis gone")), (request(3), stored(3))]

    assert frames(producer_answer(outcomes, acks_upto=True)) == ([{"ack": 1}], CLOSE_FAILED)


def test_a_close_riding_on_a_message_ends_the_answer_with_the_state():
    outcomes = [(request(1), stored(1)), (request(2, close=True), stored(2, state="closed"))]

    assert frames(producer_answer(outcomes, acks_upto=True)) == ([{"ack": 2}, {"state": "closed"}], CLOSE_NORMAL)


def test_protocol_3_holds_the_ack_across_batches_until_a_message_asks_for_it():
    def answered(seqs: list[int], held: int, ack_now: int = 0) -> Answer:
        outcomes = [(request(seq, ack_now=seq == ack_now), stored(seq)) for seq in seqs]
        return producer_answer(outcomes, acks_upto=True, held=held, hold=True)

    first = answered([1, 2], held=0)  # nothing in flight: held all the same
    second = answered([3], held=first.held)  # held a second batch (protocol 2 would send it)
    third = answered([4, 5], held=second.held, ack_now=4)  # asked for: sent, covering everything stored
    fourth = answered([6], held=third.held)

    assert [(frames(answer), answer.held) for answer in (first, second, third, fourth)] == [
        (([], None), 2),
        (([], None), 3),
        (([{"ack": 5}], None), 0),
        (([], None), 6),
    ]


def test_protocol_3_sends_a_detection_at_once_and_holds_the_ack_of_its_message():
    stop = producer_answer([(request(4), stored(4, STOP, state="stopped"))], acks_upto=True, held=3, hold=True)

    assert (frames(stop), stop.held) == (([{"detection": STOP}], None), 4)  # the detection at once, the ack held


def test_protocol_3_sends_the_held_ack_before_a_refusal_and_before_the_end_of_the_socket():
    refused = producer_answer([(request(7), GAP)], acks_upto=True, held=6, hold=True)
    failed = producer_answer([(request(7), ConnectionError("redis gone"))], acks_upto=True, held=6, hold=True)
    closed = producer_answer([(request(7, close=True), stored(7, state="closed"))], acks_upto=True, held=6, hold=True)

    assert (frames(refused), refused.held) == (([{"ack": 6}, {"error": str(GAP), "field": "seq", "seq": 7}], None), 0)
    assert frames(failed) == ([{"ack": 6}], CLOSE_FAILED)
    assert frames(closed) == ([{"ack": 7}, {"state": "closed"}], CLOSE_NORMAL)


def test_ack_now_in_protocol_2_changes_nothing_but_the_hold_for_messages_in_flight():
    asked = producer_answer([(request(1, ack_now=True), stored(1))], acks_upto=True, more_coming=True)

    assert (frames(asked), asked.held) == (([{"ack": 1}], None), 0)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (b"protocol=2", 2),
        (b"producer=ab&connection=3&protocol=2", 2),
        (b"producer=ab&connection=3&protocol=3", 3),
        (b"producer=ab&connection=3", 1),  # a client of the first protocol
        (b"protocol=1", 1),
        (b"protocol=4", 1),
        (b"protocol=two", 1),
        (b"", 1),
    ],
)
def test_a_socket_asks_for_its_protocol_in_its_query_string(query, expected):
    assert acks_protocol(query) == expected
