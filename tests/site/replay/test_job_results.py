"""A finished job's page lists its results (loops first, each linking to its
session at the first detection, with the delay past a labelled loop start),
and the compare page opens with two profiles compared, rows linking to their
sessions."""

from __future__ import annotations

import re

import pytest

from loopguard_site.replay.models import Detection, SessionVerdict
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.review.services import label_detection_set, label_session_set

from .conftest import store_demo

TOOLS = "loop-tools-readmediafile.jsonl"
CLEAN = "normal-content-sudoku-grids.jsonl"
CONTENT = "loop-content-numbered-agile.jsonl"


def result_rows(page: str) -> list[list[str]]:
    table = page[page.index('id="job-results"') :]
    rows = re.findall(r"<tr data-run=\"\d+\">(.*?)</tr>", table, re.S)
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows
    ]


@pytest.mark.django_db
def test_a_finished_job_lists_its_results_with_links_and_delays(browser, user):
    clean, tools, content = store_demo(CLEAN), store_demo(TOOLS), store_demo(CONTENT)
    job = replay_job_create(user=user, profiles=["default"], session_ids=[clean.pk, tools.pk, content.pk])
    for session in (clean, tools, content):
        replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t")
    first_tools = Detection.objects.filter(session=tools, profile="default").order_by("event_seq", "id").first()
    label_detection_set(detection=first_tools, reviewer=user, label="true_loop")
    first_content = Detection.objects.get(session=content, profile="default")
    # A reviewer saw the loop begin 20 characters before the detector's start.
    label_session_set(session=content, reviewer=user, label="missed_loop", channel="content",
                      start=first_content.start - 20, end=first_content.end)  # fmt: skip

    page = browser.get(f"/replays/{job.pk}").content.decode()
    rows = result_rows(page)
    run_tools = job.runs.get(session=tools)

    assert 'id="job-cancel"' not in page
    assert [row[:3] for row in rows] == [
        [f"#{tools.pk} {TOOLS}", "default", "loop"],
        [f"#{content.pk} {CONTENT}", "default", "loop"],
        [f"#{clean.pk} {CLEAN}", "default", "clean"],
    ]
    assert rows[0][3] == (
        f"{run_tools.first_detection_detector} · {run_tools.first_detection_type} · tools "
        f"{run_tools.first_detection_start}, fired at {run_tools.first_detection_at}"
    )
    assert rows[0][5] == f"{first_tools.at - first_tools.start} calls"
    assert rows[1][5] == f"{first_content.at - first_content.start + 20} chars"
    assert rows[2][3:] == ["—", "0", "—"]
    verdict = SessionVerdict.objects.get(session=tools, profile="default")
    assert f'href="/sessions/{tools.pk}/?profile=default#detection-{verdict.first_detection_id}"' in page
    assert f'href="/sessions/{clean.pk}/?profile=default"' in page
    # One profile: the comparison offered pairs it with the next built-in one.
    assert f'href="/replays/compare?a=default&amp;b=seed000&amp;sessions={clean.pk},{tools.pk},{content.pk}"' in page


@pytest.mark.django_db
def test_the_compare_page_opens_comparing_two_profiles_with_rows_linking_to_sessions(browser, user):
    tools = store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "seed000"], session_ids=[tools.pk])
    replay_job_session_execute(job_id=job.pk, session_id=tools.pk, claim="t")

    page = browser.get("/replays/compare").content.decode()
    first = Detection.objects.filter(session=tools, profile="default").order_by("event_seq", "id").first()

    assert '<option value="default" selected>' in page
    assert re.search(r'<select name="b"[^>]*>.*?<option value="seed000" selected>', page, re.S)
    assert "compares what two detector profiles found" in page
    assert f'<a href="/sessions/{tools.pk}/?profile=default#detection-{first.pk}">' in page
    assert f'<a href="/sessions/{tools.pk}/">#{tools.pk} {TOOLS}</a>' in page
