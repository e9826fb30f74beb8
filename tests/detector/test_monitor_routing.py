"""The monitor hands each detector only the event types it declares
(`Detector.consumes`); that must never change a detection. Reference: the
same monitor with every event routed to every detector."""

from __future__ import annotations

import json

import pytest

from detector import Monitor, builtin_config
from detector.events import EVENT_TYPES
from tests.shared_paths import shared_path

CORPUS = shared_path("corpus", "real_small.jsonl")


def corpus_streams() -> list[tuple[str, list[dict]]]:
    streams = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        events: list[dict] = [{"type": "session", "model": row["model"]}, {"type": "turn"}]
        if row["channel"] == "tool_calls":
            for n, call in enumerate(row["text"].splitlines()):
                call = json.loads(call)
                args = call["args"] if isinstance(call["args"], dict) else {"input": call["args"]}
                events.append({"type": "tool_call", "name": call["name"], "args": args, "id": str(n)})
                events.append({"type": "tool_result", "id": str(n), "ok": n % 3 != 0, "output": "same"})
                events.append({"type": "content", "text": "Let me check."} if n % 4 == 3 else {"type": "turn"})
        else:
            text = row["text"]
            events += [{"type": row["channel"], "text": text[i : i + 4]} for i in range(0, len(text), 4)]
        events.append({"type": "finish", "reason": "stop"})
        events.append({"type": "user", "text": "again?"})
        streams.append((row["id"], events))
    return streams


@pytest.mark.parametrize("profile", sorted(builtin_config().profiles))
def test_it_detects_the_same_with_and_without_routing(profile: str) -> None:
    for row_id, events in corpus_streams():
        routed, broadcast = Monitor(profile), Monitor(profile)
        broadcast._routes = {kind: broadcast.detectors for kind in EVENT_TYPES}
        for event in events:
            assert routed.feed(dict(event)) == broadcast.feed(dict(event)), (profile, row_id, event)


def test_it_skips_detectors_that_do_not_read_an_event_type() -> None:
    monitor = Monitor("default")
    content_readers = {d.name for d in monitor._routes["content"]}
    assert "tool_repetition" not in content_readers
    assert "text_loop" in content_readers
    assert {d.name for d in monitor._routes["tool_call"]} >= {"tool_repetition", "tool_dedup", "truncation"}
