"""A 100,000-event session imports whole (speed: bench/import_speed.py), and
text of any kind round-trips through the bulk event writer unchanged."""

from __future__ import annotations

import json

import pytest

from loopguard_site.transcripts.models import Event
from loopguard_site.transcripts.services import session_import_file


def agent_events(turns: int) -> list[dict]:
    events = []
    for n in range(turns):
        events += [
            {"type": "turn"},
            {"type": "reasoning", "text": f"step {n}: read the file again"},
            {"type": "tool_call", "name": "read", "args": {"path": f"f{n % 7}.py"}, "id": f"c{n}"},
            {"type": "tool_result", "id": f"c{n}", "ok": n % 3 != 0, "output": "x" * 40},
        ]
    return events


def jsonl(events: list[dict]) -> bytes:
    return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events).encode()


@pytest.mark.django_db
def test_a_100k_event_session_is_stored_whole():
    events = agent_events(25_000)

    session = session_import_file(data=jsonl(events), filename="big.jsonl")

    assert session.event_count == Event.objects.filter(session=session).count() == 100_001
    stored = session.events.order_by("seq")
    assert stored.first().data == {"type": "session", "source": "events"}
    assert [(e.seq, e.type, e.data) for e in stored.filter(seq__in=(2, 50_000, 100_001))] == [
        (2, "turn", events[0]),
        (50_000, "tool_call", events[49_998]),
        (100_001, "tool_result", events[-1]),
    ]


TRICKY = [
    "tab\there, newline\nthere, CR\r, backslash \\ and \\N and \\.",
    "\"quotes\" 'single' {braces} [brackets] %s %(name)s $1 ?",
    "中文推理 🙂 e\u0301 \u2028 \u00a0",
    "",
]


@pytest.mark.django_db
def test_text_of_any_kind_round_trips_unchanged():
    events = [{"type": "content", "text": text} for text in TRICKY]
    events.append({"type": "tool_call", "name": "w\tx", "args": {"k\\": ["\n", 1.5, None, True, {"\\N": "\\."}]}})

    session = session_import_file(data=jsonl(events), filename="tricky.jsonl")

    assert list(session.events.order_by("seq").values_list("data", flat=True))[1:] == events
    assert list(session.events.order_by("seq").values_list("type", flat=True))[1:] == ["content"] * 4 + ["tool_call"]
