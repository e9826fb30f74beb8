"""Demo data: real corpus text, loaded once however often --demo runs."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from loopguard_site.accounts.selectors import api_token_user
from loopguard_site.demo import DEMO_DIR, demo_load
from loopguard_site.replay.models import ReplayJob
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.raw_uploads import raw_upload_read
from tests.shared_paths import shared_path

# demo file -> (corpus row id, channel its text is in)
FROM_CORPUS = {
    "loop-reasoning-two-exits-riddle.jsonl": ("tli-r1qwen1.5b-para-pair-loop", "reasoning"),
    "loop-content-numbered-agile.jsonl": ("ae-qwen15-1.8b-agile-numbered", "content"),
    "loop-tools-readmediafile.jsonl": ("gh-kimicode-640-readmediafile-x4", "tool_calls"),
    "normal-reasoning-coin-flips.jsonl": ("tli-r1llama8b-coin-flips", "reasoning"),
    "normal-content-sudoku-grids.jsonl": ("ae-gpt4turbo-sudoku-grids", "content"),
    "normal-tools-reservation-fanout.jsonl": ("tau-gpt4o-fanout-reservations", "tool_calls"),
}


def read_events(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO_DIR / name).read_text().splitlines()]


@pytest.mark.parametrize(("name", "origin"), sorted(FROM_CORPUS.items()))
def test_each_demo_file_holds_its_corpus_row_exactly(name, origin):
    row_id, channel = origin
    rows = [json.loads(line) for line in shared_path("corpus", "real_small.jsonl").read_text().splitlines()]
    row = next(row for row in rows if row["id"] == row_id)
    events = read_events(name)

    assert events[0]["id"] == row_id and events[0]["model"] == row["model"]
    if channel == "tool_calls":
        calls = [{"name": e["name"], "args": e["args"]} for e in events if e["type"] == "tool_call"]
        expected = [json.loads(line) for line in row["text"].splitlines()]
        assert [call["name"] for call in calls] == [call["name"] for call in expected]
        assert [call["args"] for call in calls] == [
            call["args"] if isinstance(call["args"], dict) else {"path": call["args"]} for call in expected
        ]
    else:
        deltas = [e["text"] for e in events if e["type"] == channel]
        assert "".join(deltas) == row["text"]
        assert {len(delta) for delta in deltas[:-1]} == {40}


def test_the_claude_code_demo_holds_the_converted_session():
    source = [json.loads(line) for line in shared_path("formats", "claude_code").joinpath(
        "jkindrix__claude-snatch__thinking_session.jsonl").read_text().splitlines()]  # fmt: skip
    events = read_events("claude-code-thinking-session.jsonl")
    content = source[1]["message"]["content"]

    assert [e["type"] for e in events if e["type"] not in ("reasoning", "content")] == [
        "session",
        "user",
        "turn",
        "finish",
    ]
    assert events[1]["text"] == source[0]["message"]["content"]
    assert "".join(e["text"] for e in events if e["type"] == "reasoning") == content[0]["thinking"]
    assert "".join(e["text"] for e in events if e["type"] == "content") == content[1]["text"]
    assert events[0]["model"] == source[1]["message"]["model"]


DEMO_FILES = len(list(DEMO_DIR.glob("*.jsonl")))


@pytest.mark.django_db
def test_loading_twice_stores_each_session_once_and_keeps_the_login_and_token():
    first = demo_load()
    second = demo_load()  # a restart on the same data directory

    assert (first.loaded, first.present) == (DEMO_FILES, 0) and DEMO_FILES == 10
    assert (second.loaded, second.present) == (0, DEMO_FILES)
    job = ReplayJob.objects.get(pk=first.replay_job)  # the sessions loaded now are replayed
    assert (job.profiles, job.total) == (["default", "seed000", "gemini", "preview"], 4 * DEMO_FILES)
    assert set(job.runs.values_list("session_id", flat=True)) == set(Session.objects.values_list("pk", flat=True))
    assert second.replay_job is None
    assert Session.objects.count() == DEMO_FILES
    assert Event.objects.count() == sum(len(read_events(path.name)) for path in DEMO_DIR.glob("*.jsonl"))
    demo = get_user_model().objects.get(username="demo")
    assert (demo.is_staff, demo.is_superuser) == (True, True)
    assert (second.password, second.token) == (first.password, first.token)
    assert demo.check_password(second.password)
    assert api_token_user(second.token) == demo


@pytest.mark.django_db
def test_new_credentials_when_the_kept_ones_no_longer_work(settings):
    first = demo_load()
    demo = get_user_model().objects.get(username="demo")
    demo.set_password("changed by its admin")
    demo.save()
    second = demo_load()

    assert second.password != first.password and second.token != first.token
    assert api_token_user(first.token) is None  # the old token revoked
    assert api_token_user(second.token) == demo
    kept = json.loads((settings.DATA_DIR / "demo-login.json").read_text())
    assert kept == {"password": second.password, "token": second.token}
    assert (settings.DATA_DIR / "demo-login.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.django_db
def test_a_demo_session_keeps_its_title_model_events_and_raw_file():
    demo_load()
    session = Session.objects.get(title__startswith="Tool-call loop")
    raw = (DEMO_DIR / "loop-tools-readmediafile.jsonl").read_bytes()

    assert session.model == "kimi-k2.6 thinking (via opencode go plan)"
    assert (session.source_format, session.parser_version, session.tag_names()) == ("events", "events/1", ["demo"])
    assert session.event_count == 17
    assert list(session.events.values_list("type", flat=True)[:5]) == [
        "session",
        "turn",
        "tool_call",
        "finish",
        "tool_result",
    ]
    assert session.events.get(seq=5).data == {
        "type": "tool_result", "id": "call_1", "ok": False,
        "output": "...ChatView.tsx is a text file. Use Read to read text files.",
    }  # fmt: skip
    assert raw_upload_read(session.raw_upload) == raw
    assert session.raw_upload.filename == "loop-tools-readmediafile.jsonl"
