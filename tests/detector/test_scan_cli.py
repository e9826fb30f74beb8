"""The `loopguard scan` contract (docs/event-format.md): the JSON
object per session, the human summary, exit status 0 / 1 / 2, and errors on
stderr that name the file and line or the config key. Most tests call
`detector.cli.main` as the `loopguard` script does; the stdin and
subprocess tests run the real interpreter."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from detector.cli import main
from tests.shared_paths import REPO_ROOT, shared_path

SENTENCE = "I know the answer is here and I will find it. "  # 46 characters
DETECTION_FIELDS = {"detector", "type", "channel", "start", "end", "at"}
DETECTION_FIELDS |= {"unit", "period", "repeats", "action", "message"}


def jsonl(*events: dict) -> str:
    return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)


def deltas(kind: str, text: str, size: int = 4) -> list[dict]:
    return [{"type": kind, "text": text[i : i + size]} for i in range(0, len(text), size)]


LOOP = jsonl(
    {"type": "session", "id": "s-loop", "model": "gemini-2.5-pro"},
    {"type": "turn", "prompt": "why?"},
    *deltas("content", SENTENCE * 30),
    {"type": "finish", "reason": "length"},
)
CLEAN = jsonl(
    {"type": "session", "id": "s-clean", "model": "gemini-2.5-pro"},
    {"type": "turn"},
    *deltas("reasoning", "Let me think about this. "),
    *deltas("content", "The answer is 42."),
    {"type": "finish", "reason": "stop"},
)


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def scan(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["scan", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_no_loop_exits_0(capsys, write):
    path = write("clean.jsonl", CLEAN)
    status, out, err = scan(capsys, path, "--json")
    assert (status, err) == (0, "")
    assert json.loads(out) == {
        "session": "s-clean",
        "model": "gemini-2.5-pro",
        "profile": "default",
        "events": 15,
        "detections": [],
    }
    status, out, _ = scan(capsys, path)
    assert (status, out) == (0, "s-clean: model gemini-2.5-pro, profile default, 15 events: no loop found\n")


def test_loop_exits_1_with_the_contract_fields(capsys, write):
    status, out, err = scan(capsys, write("loop.jsonl", LOOP), "--profile", "gemini", "--json")
    assert (status, err) == (1, "")
    report = json.loads(out)
    assert out.count("\n") == 1  # one JSON object per session, one line
    assert (report["session"], report["model"], report["profile"], report["events"]) == (
        "s-loop",
        "gemini-2.5-pro",
        "gemini",
        348,
    )
    (detection,) = report["detections"]
    assert DETECTION_FIELDS <= set(detection)
    assert {k: detection[k] for k in DETECTION_FIELDS - {"message"}} == {
        "detector": "content_chanting",
        "type": "chanting_identical_sentences",
        "channel": "content",
        "start": 0,
        "end": 464,
        "at": 464,
        "unit": SENTENCE,
        "period": 46,
        "repeats": 10,
        "action": "stop",
    }
    assert detection["message"].startswith("the same 50-character text appeared 10 times within 464 characters")


def test_summary_has_one_line_per_detection(capsys, write):
    status, out, _ = scan(capsys, write("loop.jsonl", LOOP), "--profile", "gemini")
    lines = out.splitlines()
    assert status == 1
    assert lines[0] == "s-loop: model gemini-2.5-pro, profile gemini, 348 events: 1 loop found"
    assert lines[1].startswith(
        "  content 0-464 at 464 [content_chanting/chanting_identical_sentences] stop: the same 50-character text"
    )
    assert len(lines) == 2


def test_seed000_profile_on_reasoning(capsys, write):
    text = "".join(chr(ord("a") + (i * 7919) % 26) for i in range(1900)) + "思考" * 100
    path = write("r.jsonl", jsonl({"type": "session", "id": "r"}, {"type": "turn"}, *deltas("reasoning", text)))
    status, out, _ = scan(capsys, path, "--profile", "seed000", "--json")
    (detection,) = json.loads(out)["detections"]
    assert status == 1
    found = (detection["type"], detection["start"], detection["end"], detection["at"])
    assert found == ("short_unit_loop", 1900, 2000, 2000)


def test_profile_by_model_glob_from_config(capsys, write):
    config = write("team.toml", '[profiles.flash]\nextends = "gemini"\nmodels = ["gemini-*"]\n')
    status, out, _ = scan(capsys, write("loop.jsonl", LOOP), "--config", config, "--json")
    assert (status, json.loads(out)["profile"]) == (1, "flash")
    # without a matching glob the default profile runs
    status, out, _ = scan(capsys, write("loop.jsonl", LOOP), "--json")
    assert json.loads(out)["profile"] == "default"


def test_profile_by_name_from_config(capsys, write):
    config = write("team.json", json.dumps({"profiles": {"mine": {"content_chanting": {"action": "warn"}}}}))
    status, out, _ = scan(capsys, write("loop.jsonl", LOOP), "--config", config, "--profile", "mine", "--json")
    report = json.loads(out)
    assert (status, report["profile"], report["detections"][0]["action"]) == (1, "mine", "warn")


def test_bad_json_exits_2_naming_file_and_line(capsys, write):
    path = write("bad.jsonl", CLEAN.replace('{"type": "turn"}', '{"type": "turn"', 1))
    status, out, err = scan(capsys, path, "--json")
    assert (status, out) == (2, "")
    assert err.startswith(f"loopguard scan: {path}: line 2: ")


def test_bad_event_exits_2_naming_file_and_line(capsys, write):
    path = write("bad.jsonl", jsonl({"type": "session"}, {"type": "content", "text": "a"}, {"type": "thinking"}))
    status, out, err = scan(capsys, path)
    assert (status, out) == (2, "")
    assert err == f"loopguard scan: {path}: line 3: field type: unknown event type 'thinking'\n"


def test_missing_file_exits_2(capsys, tmp_path):
    path = str(tmp_path / "nope.jsonl")
    status, out, err = scan(capsys, path)
    assert (status, out) == (2, "")
    assert err.startswith(f"loopguard scan: {path}: cannot read")


def test_bad_config_exits_2_naming_the_key(capsys, write):
    config = write("team.toml", "[profiles.x.content_chanting]\nchunk_size = 'big'\n")
    status, out, err = scan(capsys, write("clean.jsonl", CLEAN), "--config", config)
    assert (status, out) == (2, "")
    assert err.startswith(f"loopguard scan: {config}: profiles.x.content_chanting.chunk_size: expected int")


def test_unknown_profile_exits_2(capsys, write):
    status, out, err = scan(capsys, write("clean.jsonl", CLEAN), "--profile", "nope")
    assert (status, out) == (2, "")
    assert err.startswith("loopguard scan: profile 'nope' is not defined")


def test_other_formats_by_name_or_detected(capsys):
    sample = str(shared_path("formats", "openai_stream", "vercel__ai__deepseek-tool-call.chunks.txt"))
    detected = scan(capsys, sample, "--json")
    named = scan(capsys, sample, "--format", "openai", "--json")
    assert detected == named
    assert detected[0] == 0 and json.loads(detected[1])["model"] == "deepseek-v4-flash"
    status, out, err = scan(capsys, sample, "--format", "events")
    assert (status, out) == (2, "")
    assert err.startswith(f"loopguard scan: {sample}: line 1: ")


def test_transcript_text_is_escaped_in_the_summary(capsys, write):
    path = write("evil.jsonl", jsonl({"type": "session", "id": "s\x1b[2J", "model": "m\u202e"}, {"type": "turn"}))
    status, out, _ = scan(capsys, path)
    assert status == 0
    assert out == "s\\x1b[2J: model m\\u202e, profile default, 2 events: no loop found\n"


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LOOP.encode("utf-8"))))
    status, out, _ = scan(capsys, "-", "--profile", "gemini", "--json")
    assert (status, json.loads(out)["session"]) == (1, "s-loop")


def _real_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    code = "import sys; from detector.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True, cwd=REPO_ROOT, timeout=120
    )


def test_real_cli_exit_statuses_and_stdin():
    loop = _real_cli("scan", "-", "--profile", "gemini", "--json", stdin=LOOP.encode("utf-8"))
    assert loop.returncode == 1
    assert json.loads(loop.stdout)["detections"][0]["at"] == 464
    clean = _real_cli("scan", "-", stdin=CLEAN.encode("utf-8"))
    assert clean.returncode == 0
    assert clean.stdout.decode() == "s-clean: model gemini-2.5-pro, profile default, 15 events: no loop found\n"
    bad = _real_cli("scan", "-", stdin=b'{"type": "session"}\n{"type": "content", "text": }\n')
    assert (bad.returncode, bad.stdout) == (2, b"")
    assert bad.stderr.decode().startswith("loopguard scan: <stdin>: line 2: ")


def test_an_invalid_imported_event_exits_2(capsys, monkeypatch, write):
    # importers validate their events; scan still reports a broken one cleanly
    from detector.cli import scan as scan_module
    from detector.importers import Transcript

    broken = Transcript("events", "1", [{"type": "session"}, {"type": "content", "text": 3}])
    monkeypatch.setattr(scan_module, "parse_path", lambda path, fmt: broken)
    status, out, err = scan(capsys, "x.jsonl")
    assert (status, out) == (2, "")
    assert err == "loopguard scan: x.jsonl: field text: event 2: field 'text' of a content event must be a string\n"
