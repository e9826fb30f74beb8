"""The monitor hands each detector only the event types it declares
(`Detector.consumes`), and holds back text chunks from detectors that need
not see them yet (`Detector.reads_text_whole`, `Detector.wake_chars`),
handing them on in runs; that must never change a detection. Reference: the
same monitor with every event, every chunk on its own, routed to every
detector."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from detector import Monitor, builtin_config
from detector import monitor as monitor_module
from detector.events import EVENT_TYPES, TEXT_CHANNELS, EventError
from detector.monitor import StaleMonitorError
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
        routed, broadcast = Monitor(profile), _broadcast(Monitor(profile))
        for event in events:
            assert routed.feed(dict(event)) == broadcast.feed(dict(event)), (profile, row_id, event)


def _broadcast(monitor: Monitor) -> Monitor:
    """The reference: every event and every chunk to every detector, at once."""
    monitor._routes = {kind: monitor.detectors for kind in EVENT_TYPES}
    monitor._chunk_readers = {kind: monitor.detectors for kind in TEXT_CHANNELS}
    monitor._run_readers = {kind: [] for kind in TEXT_CHANNELS}
    monitor._every_chunk = {kind: True for kind in TEXT_CHANNELS}
    return monitor


def test_held_text_reaches_its_readers_before_a_tick_and_before_any_other_event() -> None:
    # After a `finish` the session waits for the user (health: not working);
    # an untimed chunk says the model works again, so a silence of 700 s is
    # a stall, but only if the chunk reached health before the tick.
    events = [
        {"type": "session", "model": "m"},
        {"type": "turn", "t": 0},
        {"type": "content", "text": "I'll read the file.", "t": 1},
        {"type": "finish", "reason": "stop", "t": 2},
        {"type": "content", "text": "I'll read "},
        {"type": "content", "text": "the file."},
        700.0,
        {"type": "content", "text": " And I'll run it."},
        {"type": "turn", "t": 800},
        {"type": "reasoning", "text": "Hmm"},
        {"type": "reasoning", "text": "".join(random.Random(0).choices("abcdefgh ", k=5000))},
        {"type": "content", "text": "I'll check it."},
        {"type": "finish", "reason": "stop"},
    ]
    routed, broadcast = Monitor("default"), _broadcast(Monitor("default"))
    seen = []
    for event in events:
        if isinstance(event, float):
            fired = routed.tick(event)
            assert fired == broadcast.tick(event)
        else:
            fired = routed.feed(dict(event))
            assert fired == broadcast.feed(dict(event)), event
        seen += [d.type for d in fired]
    assert seen == ["stream_stalled"]


def test_it_skips_detectors_that_do_not_read_an_event_type() -> None:
    monitor = Monitor("default")
    content_readers = {d.name for d in monitor._routes["content"]}
    assert "tool_repetition" not in content_readers
    assert "text_loop" in content_readers
    assert {d.name for d in monitor._routes["tool_call"]} >= {"tool_repetition", "tool_dedup", "truncation"}


def test_a_monitor_pickled_by_other_detector_code_does_not_load(monkeypatch) -> None:
    monitor = Monitor("default")
    monitor.feed({"type": "content", "text": "Hello. "})
    again = pickle.loads(pickle.dumps(monitor))
    assert (again.ctx.offsets["content"], again.feed({"type": "content", "text": "Hi."})) == (7, [])
    monkeypatch.setattr(monitor_module, "detector_code", lambda: "an older version")
    stale = pickle.dumps(monitor)
    monkeypatch.undo()
    with pytest.raises(StaleMonitorError, match="pickled by other detector code"):
        pickle.loads(stale)


def test_a_text_detector_gets_a_chunk_only_at_a_mark_a_check_or_the_end() -> None:
    # text_loop checks every 32 characters and ends a block at "."; the
    # chunks between are held back and handed on joined, at their offset.
    monitor = Monitor("default")
    seen: dict[str, list[tuple[int, str]]] = {}
    for detector in monitor.detectors:
        if detector.name in ("text_loop", "near_duplicate", "health"):
            detector.feed = _recording(detector.feed, seen.setdefault(detector.name, []))
    text = "the quick brown fox jumps over the lazy dog. It sleeps"
    for i in range(0, len(text), 4):
        assert monitor.feed({"type": "content", "text": text[i : i + 4]}) == []
    monitor.feed({"type": "finish", "reason": "stop"})
    handed = [(0, "the "), (4, "quick brown fox jumps over t"), (32, "he lazy dog."), (44, " It "), (48, "sleeps")]
    assert seen["text_loop"] == seen["near_duplicate"] == handed
    # A whole-text reader gets the run once, before the `finish`, its offset past the run.
    assert seen["health"] == [(54, text)]


def test_a_chunk_whose_marks_have_no_whitespace_after_them_is_held() -> None:
    # ",", ":" and ";" end a block only with whitespace after them (text_loop's
    # `mark_chars`), and near_duplicate does not wake on them: "en,b" is held,
    # so is "lue:", but the chunk after a mark is handed on with them, since
    # it may start with that whitespace (" 1,0" does).
    monitor = Monitor("default")
    seen: dict[str, list[tuple[int, str]]] = {}
    for detector in monitor.detectors:
        if detector.name in ("text_loop", "near_duplicate"):
            detector.feed = _recording(detector.feed, seen.setdefault(detector.name, []))
    text = "Red, green,blue: 1,000 ways; we go"
    for i in range(0, len(text), 4):
        assert monitor.feed({"type": "content", "text": text[i : i + 4]}) == []
    handed = [(0, "Red,"), (4, " gre"), (8, "en,blue: 1,0"), (20, "00 ways; we ")]
    assert seen["text_loop"] == seen["near_duplicate"] == handed


def _recording(feed, record: list[tuple[int, str]]):
    def recorded(event: dict, ctx) -> list:
        if event["type"] == "content":
            record.append((ctx.offsets["content"], event["text"]))
        return feed(event, ctx)

    return recorded


@pytest.mark.parametrize("kind", ["", "thinking", None])
def test_a_chunk_of_an_unknown_type_is_refused_by_name_whatever_is_held(kind) -> None:
    fresh, holding = Monitor("default"), Monitor("default")
    holding.feed({"type": "content", "text": "Some text"})  # held: no reader needs it yet
    for monitor in (fresh, holding):
        with pytest.raises(EventError, match=f"unknown event type {kind!r}"):
            monitor.feed({"type": kind, "text": "x"})
