"""Rows of real model output from the repository's fixtures/demo as the
Anthropic Messages and OpenAI Responses APIs would answer them, streamed
or whole, for `tests.openai_stub.StubUpstream`; and what the proxy tests
check a session against.

A row is `{"id", "model", "channel", "text"}` as `tests.openai_stub`'s
helpers take it; streams cut its text into `DELTA_SIZE`-character deltas, so
event k >= 1 of `row_events(row)` is the text of delta k of every API.
"""

from __future__ import annotations

import json

from detector.config import builtin_config
from loopguard_site.transcripts.models import Event, Session
from tests.conftest import REPO_ROOT
from tests.openai_stub import DELTA_SIZE, reference_stop, row_events

FIXTURES = REPO_ROOT / "fixtures" / "demo"
LOOP_FIXTURE = "loop-content-numbered-agile"  # Qwen1.5-1.8B-Chat: "N. Agile" with N climbing
LONG = 20  # repeats of the loop fixture: 108,120 characters, 27,030 deltas
NORMAL_FIXTURE = "normal-content-sudoku-grids"  # GPT-4 Turbo re-prints a grid: repeated, not a loop


def fixture_row(name: str, repeats: int = 1) -> dict:
    """A demo fixture's content text as a row; `repeats` times over, for a
    stream longer than the buffers between the stub and the client (so that
    a proxy hanging up early is seen)."""
    events = [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    text = "".join(event["text"] for event in events if event["type"] == "content")
    return {"id": events[0]["id"], "model": events[0]["model"], "channel": "content", "text": text * repeats}


def deltas(row: dict) -> list[str]:
    text = row["text"]
    return [text[i : i + DELTA_SIZE] for i in range(0, len(text), DELTA_SIZE)]


def anthropic_records(row: dict) -> list[tuple[str, dict]]:
    """The row as an Anthropic Messages stream: record 0 starts the message
    (the turn), record k + 2 holds delta k."""
    message = anthropic_message(row)
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    records = [
        {"type": "message_start", "message": start},
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}} for d in deltas(row)),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": message["usage"]},
        {"type": "message_stop"},
    ]
    return [(record["type"], record) for record in records]


def anthropic_message(row: dict) -> dict:
    return {
        "id": f"msg_{row['id']}",
        "type": "message",
        "role": "assistant",
        "model": row["model"],
        "content": [{"type": "text", "text": row["text"]}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": len(row["text"]) // 4},
    }


def responses_object(row: dict, status: str = "completed", text: str | None = None) -> dict:
    text = row["text"] if text is None else text
    return {
        "id": f"resp_{row['id']}",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": row["model"],
        "status": status,
        "output": [
            {
                "id": f"msg_{row['id']}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
        if status == "completed"
        else [],
    }


def responses_records(row: dict) -> list[tuple[str, dict]]:
    """The row as an OpenAI Responses stream: record 0 creates the response
    (the turn), record k + 3 holds delta k."""
    item = {"id": f"msg_{row['id']}", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    done = responses_object(row)
    records = [
        {"type": "response.created", "response": responses_object(row, "in_progress")},
        {"type": "response.in_progress", "response": responses_object(row, "in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **where, "part": part},
        *({"type": "response.output_text.delta", **where, "delta": d} for d in deltas(row)),
        {"type": "response.output_text.done", **where, "text": row["text"]},
        {"type": "response.content_part.done", **where, "part": done["output"][0]["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": done["output"][0]},
        {"type": "response.completed", "response": done},
    ]
    return [(record["type"], {**record, "sequence_number": number}) for number, record in enumerate(records)]


def expected_stop(row: dict) -> tuple[int, dict]:
    """Where the session's profile (chosen by the row's model) stops the row,
    and the detection as the lab stores it (id aside)."""
    profile = builtin_config().select(model=row["model"]).name
    index, detection = reference_stop(row_events(row), profile)
    return index, {"profile": profile, **detection, "event_seq": index + 1}


def stored_events(session: Session) -> list[dict]:
    return list(Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True))


def without_id(detection: dict) -> dict:
    return {key: value for key, value in detection.items() if key != "id"}


def assert_whole_loop_recorded(user, loop: dict, row: dict) -> None:
    """The session of a whole looping answer: `loop` (the answer's
    `loopguard`) names it and its stop; stopped; the answer stored as one
    content event."""
    session = Session.objects.get(uploader=user)
    detection = loop["detection"]
    assert (loop["session"], detection["action"], detection["detector"]) == (session.pk, "stop", "text_loop")
    assert session.state == "stopped"
    assert stored_events(session) == [
        {"type": "turn"},
        {"type": "content", "text": row["text"]},
        {"type": "finish", "reason": "stop"},
    ]
