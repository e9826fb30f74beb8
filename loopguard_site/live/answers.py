"""What a producer socket answers to its messages (docs/api.md, "Live
ingest"), as the texts it sends. Pure: the outcomes of the socket's
messages that one batch stored, in order, in; frames out.

Three versions of the acknowledgements, chosen by the socket's query string
(`protocol.acks_protocol`):

- 1, the first protocol: `{"ack": N}` for each message.
- 2 (`?protocol=2`): one `{"ack": N}` for all
  the socket's messages stored together, naming the highest; an ack always
  covers every message up to N (a message is stored only after the one
  before it), so it tells a client of any version what it needs. A frame
  costs the server more than the message's own work (BENCHMARKS.md,
  section 4): version 2 sends one ack a batch where version 1 sent one a
  message.

  While the socket has later messages in flight (received, not yet
  answered), a batch's ack may be held for the answer to them, once: an ack
  then covers two batches, and is never later than the socket's next batch.
- 3 (`?protocol=3`, which `LiveSession` sends): as 2, and the ack is held
  for up to ACK_HOLD_SECONDS (the socket's timer sends it then), covering
  every message stored meanwhile, unless a message of the answer asked for
  it (`"ack_now": true`), or a refusal, a failure or a close comes. A
  producer batching over 0.25 s sends a message every 0.25 s, each stored
  apart: protocol 2 answered each with an ack frame, 3 with one a second
  at most.

In every version a message's detections come before the ack that covers it, and
a refused message's error comes after the ack of the messages before it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from loopguard_site.errors import FieldError

from .services import IngestRequest, IngestResult

CLOSE_NORMAL = 1000  # the session closed as the producer asked
# The server failed the message (its batch, or the forward to the viewers):
# the producer reconnects and sends it again. Not 1011, which autobahn lets
# no application send.
CLOSE_FAILED = 4500
ACK_HOLD_SECONDS = 1.0  # protocol 3: the longest an ack of stored messages waits for later ones


def error_message(error: FieldError, seq: object) -> dict:
    """A refused message's answer on the producer socket (docs/event-format.md):
    `{"error", "field", "seq"}`, and `retry_after` when only time can help."""
    message = {"error": str(error), "field": error.field, "seq": seq}
    if error.retry_after is not None:
        message["retry_after"] = error.retry_after
    return message


def ack_text(seq: int) -> str:
    return f'{{"ack": {seq}}}'  # what json.dumps({"ack": seq}) gives, without the encoder


@dataclass(frozen=True)
class Answer:
    texts: list[str]  # the frames to send, in order
    close_code: int | None = None  # then the socket ends with this code
    held: int = 0  # the seq of an ack held for a later answer (protocols 2 and 3); 0: none


def producer_answer(
    outcomes: Sequence[tuple[IngestRequest, IngestResult | FieldError | Exception]],
    *,
    acks_upto: bool,
    held: int = 0,
    more_coming: bool = False,
    hold: bool = False,
) -> Answer:
    """The frames answering a socket's messages stored together, in the
    order they were sent. `acks_upto`: protocols 2 and 3, one ack naming the
    highest seq. A message that closed the session ends the answer with
    `{"state"}` and close code 1000; one the server failed (not a
    `FieldError`) ends it with CLOSE_FAILED, the messages before it answered.
    `held`: the ack the last answer held (protocols 2 and 3), sent with this one's
    frames. `more_coming`: the socket has later messages in flight, whose
    answer this one's ack may ride on (held, unless one was held already:
    an ack waits one batch at most). An ack frame costs the server about
    what a one-event message's own work does (BENCHMARKS.md, section 4).
    `hold` (protocol 3): the ack is held, whatever was held before (the
    socket's timer bounds the wait), unless a message asked for it
    (`ack_now`)."""
    texts: list[str] = []
    upto = held  # the highest seq stored and not yet acknowledged (protocols 2 and 3)

    def acknowledge() -> None:
        nonlocal upto
        if upto:
            texts.append(ack_text(upto))
            upto = 0

    for request, outcome in outcomes:
        if isinstance(outcome, FieldError):
            acknowledge()
            texts.append(json.dumps(error_message(outcome, request.seq)))
            continue
        if isinstance(outcome, Exception):
            acknowledge()
            return Answer(texts, CLOSE_FAILED)
        texts += [json.dumps({"detection": detection}) for detection in outcome.detections]
        if acks_upto:
            upto = max(upto, outcome.ack)
        else:
            texts.append(ack_text(outcome.ack))
        if request.close:
            acknowledge()
            texts.append(json.dumps({"state": outcome.state}))
            return Answer(texts, CLOSE_NORMAL)
    asked = any(request.ack_now for request, _ in outcomes)
    if acks_upto and not asked and (hold or (more_coming and not held)):
        return Answer(texts, held=upto)
    acknowledge()
    return Answer(texts)
