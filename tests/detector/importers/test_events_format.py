"""The `events` format (LoopGuard JSON Lines) and the package API around it."""

from __future__ import annotations

import io
import json

import pytest

from detector.cli import main
from detector.importers import FORMATS, TranscriptError, parse_bytes, parse_path


def jsonl(*events: dict) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def test_it_keeps_events_and_their_session_header():
    data = jsonl(
        {"type": "session", "model": "m1", "meta": {"title": "T"}},
        {"type": "turn"},
        {"type": "content", "text": "hé", "t": 0.5, "x": 1},
    )
    t = parse_bytes(data, "a.jsonl")
    assert (t.format, t.parser_version, t.model, t.title) == ("events", "events/1", "m1", "T")
    assert t.events == [
        {"type": "session", "model": "m1", "meta": {"title": "T"}},
        {"type": "turn"},
        {"type": "content", "text": "hé", "t": 0.5, "x": 1},
    ]
    assert t.skipped == [] and t.warnings == []


def test_only_lf_and_crlf_end_lines():
    # JSON writers leave U+2028, U+0085, form feeds raw inside strings
    text = "a\u2028b\x85c\x0cd\x1ce"
    data = (json.dumps({"type": "content", "text": text}, ensure_ascii=False) + "\r\n").encode()
    assert parse_bytes(data * 2, "a.jsonl").events[1:] == [{"type": "content", "text": text}] * 2


def test_numbers_json_lacks_are_read_as_null():
    huge = b"-" + b"9" * 5000
    data = b'{"type": "content", "text": "a", "t": NaN, "x": [Infinity, -Infinity, 1e999, 1.5, %s, 7]}\n' % huge
    event = {"type": "content", "text": "a", "t": None, "x": [None, None, None, 1.5, None, 7]}
    assert parse_bytes(data, "a.jsonl").events[1] == event


def test_it_adds_a_session_event_when_the_file_has_none():
    t = parse_bytes(b'\n{"type": "reasoning", "text": "x"}\n\n', "a.jsonl")
    assert t.events == [{"type": "session", "source": "events"}, {"type": "reasoning", "text": "x"}]
    assert t.model is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'{"type": "content", "text": "a"}\n{"type": "bogus"}\n',
            "a.jsonl: line 2: field type: unknown event type 'bogus'",
        ),
        (
            b'{"type": "content", "text": "a"}\n{"type": "content", "text" "b"}\n',
            "a.jsonl: line 2: invalid JSON: Expecting ':' delimiter (column 28)",
        ),
        (
            b'{"type": "content", "text": "a"}\n{"type": "content", "te',
            "a.jsonl: line 2: truncated JSON: Unterminated string starting at (column 21)",
        ),
        (
            b'{"type": "tool_call", "name": 3}\n',
            "a.jsonl: line 1: field name: field 'name' of a tool_call event must be a string",
        ),
        (
            b'{"type": "turn"}\n{"type": "session"}\n',
            "a.jsonl: line 2: field type: a session event must be the first event",
        ),
        (b'{"type": "turn"}\n[1, 2]\n', "a.jsonl: line 2: expected a JSON object, got an array"),
    ],
)
def test_it_names_the_bad_line(data, message):
    with pytest.raises(TranscriptError) as caught:
        parse_bytes(data, "a.jsonl", "events")
    assert str(caught.value).startswith(message)
    assert caught.value.file == "a.jsonl"


def test_it_lists_every_documented_format():
    assert FORMATS == ("events", "openai", "anthropic", "claude-code", "codex", "gemini-cli", "cline", "otel")


def test_convert_prints_events_as_json_lines(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl({"type": "content", "text": "é"}))
    assert main(["convert", str(path)]) == 0
    assert capsys.readouterr().out == '{"type": "session", "source": "events"}\n{"type": "content", "text": "é"}\n'


def test_convert_exits_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "turn"}\n{oops\n')
    assert main(["convert", str(path), "--format", "events"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    reason = "invalid JSON: Expecting property name enclosed in double quotes (column 2)"
    assert captured.err == f"loopguard convert: {path}: line 2: {reason}\n"


def test_parse_path_reports_a_missing_file(tmp_path):
    with pytest.raises(TranscriptError, match=r"missing\.jsonl: cannot read: No such file or directory"):
        parse_path(tmp_path / "missing.jsonl")


def test_convert_reads_standard_input_and_takes_a_format(monkeypatch, capsys):
    class Stdin:
        buffer = io.BytesIO(b'data: {"type": "message_start", "message": {"model": "c"}}\n\n')

    monkeypatch.setattr("sys.stdin", Stdin)
    assert main(["convert", "-", "--format", "anthropic"]) == 0
    assert capsys.readouterr().out == '{"type": "session", "source": "anthropic", "model": "c"}\n{"type": "turn"}\n'
