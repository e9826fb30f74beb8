"""`loopguard replay`: sessions × profiles replayed in this process, one line
each, results stored as a job's task stores them; exit 0 / 1 / 2."""

from __future__ import annotations

import pytest

from detector.cli import main
from loopguard_site.replay.models import Detection

from .conftest import scan_count, scan_json, store_demo, stored_detections

TOOLS = "loop-tools-readmediafile.jsonl"
CLEAN = "normal-content-sudoku-grids.jsonl"


@pytest.mark.django_db
def test_it_replays_each_session_through_each_profile_and_says_what_it_found(capsys):
    loop, clean = store_demo(TOOLS), store_demo(CLEAN)
    first = scan_json(TOOLS, "default")["detections"][0]

    status = main(["replay", str(loop.pk), str(clean.pk), "--profile", "default", "--profile", "gemini"])

    found = scan_count(TOOLS, "default")
    assert (status, capsys.readouterr().out.splitlines()) == (1, [
        f"session {loop.pk} × default: {found} detections, first {first['detector']}/{first['type']} on tools "
        f"at {first['at']} (loop from {first['start']}, {4 - first['start']} tool calls after it)",
        f"session {loop.pk} × gemini: 0 detections",
        f"session {clean.pk} × default: 0 detections",
        f"session {clean.pk} × gemini: 0 detections",
    ])  # fmt: skip
    assert stored_detections(loop, "default") == scan_json(TOOLS, "default")["detections"]


@pytest.mark.django_db
def test_all_sessions_with_a_tag_and_no_loop_exit_0(capsys):
    picked = store_demo(CLEAN, tags=("x",))
    store_demo(TOOLS)

    status = main(["replay", "--all", "--tag", "x"])

    assert (status, capsys.readouterr().out) == (0, f"session {picked.pk} × default: 0 detections\n")
    assert Detection.objects.count() == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "--profile", "nope", "--all"], "unknown profile 'nope' (known: default, seed000, gemini, preview)"),
        (["replay"], "give session ids or --all, not both"),
        (["replay", "1", "--all"], "give session ids or --all, not both"),
        (["replay", "999999"], "no session with id 999999"),
        (["replay", "1", "--tag", "x"], 'a filter applies to "all": true only'),
    ],
)
@pytest.mark.django_db
def test_a_bad_request_exits_2_naming_what_is_wrong(capsys, argv, message):
    store_demo(CLEAN)
    assert main(argv) == 2
    assert capsys.readouterr() == ("", f"loopguard replay: {message}\n")
