"""Every class of bad input is a `TranscriptError` naming the file and the
line or field; format detection says what it tried."""

from __future__ import annotations

import codecs
import json

import pytest

from detector.importers import FORMATS, TranscriptError, parse_bytes
from tests.shared_paths import FORMATS_DIR

CODEX = next((FORMATS_DIR / "codex_cli").iterdir()).read_bytes()
GEMINI = (FORMATS_DIR / "gemini_cli/kvsankar__agent-history__gemini_golden.json").read_bytes()
OTEL = (FORMATS_DIR / "otel/Arize-ai__openinference__ai-streamText-doStream.json").read_bytes()
EVENTS = b'{"type": "turn"}\n{"type": "content", "text": "h\xc3\xa9"}\n'


@pytest.mark.parametrize(
    ("data", "fmt", "message"),
    [
        (b"", "auto", "x.jsonl: empty file"),
        (b" \n\t\n", "events", "x.jsonl: empty file"),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "auto",
            "x.jsonl: line 3: binary file (NUL byte), not a text transcript",
        ),
        (
            b'{"type": "turn"}\n\xff\xfe\xfa',
            "auto",
            "x.jsonl: line 2: not UTF-8 text: byte 0xff at offset 17 cannot be decoded",
        ),
        (b'{"type": "turn"}\n{"type": "content", "text": "abc', "auto", "x.jsonl: line 2: truncated JSON"),
        (
            b"{'type': 'turn'}\n",
            "events",
            "x.jsonl: line 1: invalid JSON: Expecting property name enclosed in double quotes",
        ),
        (
            b"hello, world\n",
            "auto",
            "x.jsonl: could not tell the format; name it with --format (tried: " + ", ".join(FORMATS) + ")",
        ),
        (b'{"type": "mystery"}\n', "events", "x.jsonl: line 1: field type: unknown event type 'mystery'"),
        (CODEX, "events", "x.jsonl: line 1: field type: unknown event type 'session_meta'"),
        (
            CODEX,
            "anthropic",
            "x.jsonl: no Anthropic Messages stream events or response found; is this the right format?",
        ),
        (
            CODEX,
            "claude-code",
            "x.jsonl: no Claude Code user, assistant or summary records found; is this the right format?",
        ),
        (EVENTS, "codex", "x.jsonl: no Codex rollout records found; is this the right format?"),
        (
            EVENTS,
            "openai",
            "x.jsonl: no OpenAI chat completion chunks, completion or messages found; is this the right format?",
        ),
        (EVENTS, "gemini-cli", "x.jsonl: line 1: not a Gemini CLI record"),
        (EVENTS, "cline", "x.jsonl: line 2: invalid JSON: Extra data (column 1)"),
        (b'{"a": 1}', "cline", "x.jsonl: not a Cline task file: expected an array of messages, got an object"),
        (b"[1, 2]", "otel", "x.jsonl: not OpenTelemetry spans: got a number"),
        (b'{"messages": 3}', "gemini-cli", "x.jsonl: line 1: not a Gemini CLI record"),
        (b'[{"role": "user", "content": "hi"}', "openai", "x.jsonl: line 1: truncated JSON"),
        (b"[" * 100000, "auto", "x.jsonl: JSON nested too deeply"),
        (GEMINI[:700], "auto", "x.jsonl: line 22: truncated JSON: Unterminated string starting at (column 26)"),
        (GEMINI[:700], "gemini-cli", "x.jsonl: line 22: truncated JSON: Unterminated string starting at (column 26)"),
        (OTEL[:1200], "otel", "x.jsonl: line 24: truncated JSON: Unterminated string starting at (column 27)"),
        (
            b'{"type": "turn"}\n{"type": "turn"',
            "auto",
            "x.jsonl: line 2: truncated JSON: Expecting ',' delimiter (column 16)",
        ),
        (b"[" * 100000 + b"]" * 100000, "otel", "x.jsonl: JSON nested too deeply"),
        (b"{}", "nonsense", "x.jsonl: unknown format 'nonsense' (known: auto, " + ", ".join(FORMATS) + ")"),
    ],
)
def test_bad_input_names_the_file_and_where(data, fmt, message):
    with pytest.raises(TranscriptError) as caught:
        parse_bytes(data, "x.jsonl", fmt)
    assert str(caught.value).startswith(message)
    assert caught.value.file == "x.jsonl"


def test_a_wrong_field_type_names_the_field():
    with pytest.raises(TranscriptError) as caught:
        parse_bytes(b'{"type": "tool_call", "name": "f", "args": [1]}\n', "x.jsonl")
    assert (caught.value.line, caught.value.field) == (1, "args")


@pytest.mark.parametrize(
    "encoded",
    [
        codecs.BOM_UTF8 + EVENTS,
        codecs.BOM_UTF16_LE + EVENTS.decode().encode("utf-16-le"),
        codecs.BOM_UTF16_BE + EVENTS.decode().encode("utf-16-be"),
    ],
)
def test_utf8_with_bom_and_utf16_with_bom_are_read(encoded):
    assert parse_bytes(encoded, "x.jsonl").events == [
        {"type": "session", "source": "events"},
        {"type": "turn"},
        {"type": "content", "text": "hé"},
    ]


def test_utf16_without_bom_is_called_binary():
    with pytest.raises(TranscriptError, match="binary file"):
        parse_bytes(EVENTS.decode().encode("utf-16-le"), "x.jsonl")


@pytest.mark.parametrize(
    ("record", "fmt"),
    [
        ({"type": "message_start", "message": {}}, "anthropic"),
        ({"choices": [], "object": "chat.completion.chunk"}, "openai"),
        ({"type": "session_meta", "payload": {}}, "codex"),
        ({"type": "user", "uuid": "u", "message": {"content": "x"}}, "claude-code"),
        ({"sessionId": "s", "projectHash": "h"}, "gemini-cli"),
        ({"id": "m", "type": "gemini", "content": "x"}, "gemini-cli"),
        ({"type": "user", "text": "x"}, "events"),
        ({"resourceSpans": []}, "otel"),
    ],
)
def test_detection_reads_the_first_record(record, fmt):
    from detector.importers.detect import classify_record

    assert classify_record(record) == fmt


def test_detection_ignores_the_file_name():
    data = json.dumps(
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
        ]
    )
    assert parse_bytes(data.encode(), "events.jsonl").format == "cline"


@pytest.mark.parametrize(
    "data",
    [
        [{"role": "user", "content": [{"type": {"a": 1}}]}],
        {"type": ["message_start"], "payload": {}},
        {"type": {"x": 1}, "uuid": "u"},
        {"id": "m", "type": "gemini", "content": "x", "toolCalls": [{"name": ["n"], "args": [1]}]},
        {"$rewindTo": {"id": "m"}},
        [{"say": ["x"], "type": "say", "text": {"a": 1}}],
        [{"ts": 10**400, "type": "say", "say": "task", "text": "x"}, {"ts": -1e308, "type": "say", "say": "task"}],
        [{"name": "a", "startTime": [10**300, 5], "attributes": {"gen_ai.request.model": "m", "gen_ai.prompt.².x": 1}}],
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a", "startTimeUnixNano": "9" * 400}]}]}]},
        {"type": "user", "uuid": "u", "timestamp": 10**4000, "message": {"content": "x"}},
    ],
)
@pytest.mark.parametrize("fmt", ["auto", *FORMATS])
def test_values_of_unexpected_types_or_sizes_never_escape_as_other_errors(data, fmt):
    try:
        transcript = parse_bytes(json.dumps(data).encode(), "x.json", fmt)
    except TranscriptError as exc:
        assert exc.file == "x.json"
    else:
        assert transcript.events[0]["type"] == "session"
