"""The lab's replay pages: the form, a job's page, the comparison."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from loopguard_site.replay.compare import compare_profiles
from loopguard_site.replay.models import ReplayJob
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events

from .conftest import store_demo

TOOLS = "loop-tools-readmediafile.jsonl"


@pytest.mark.parametrize("path", ["/replays/", "/replays/new", "/replays/1", "/replays/compare"])
@pytest.mark.django_db
def test_it_sends_a_visitor_to_log_in(path):
    answer = Client().get(path)
    assert (answer.status_code, answer["Location"]) == (302, f"/accounts/login/?next={path}")


@pytest.mark.django_db
def test_the_form_offers_sessions_escaped_and_every_profile(browser):
    hostile = session_create_from_events(
        title="<script>x</script>", model="", source_format="events", parser_version="1", events=[]
    )

    page = browser.get(f"/replays/new?session={hostile.pk}").content.decode()

    assert f"#{hostile.pk} &lt;script&gt;x&lt;/script&gt;" in page
    assert "<script>x</script>" not in page
    assert f'value="{hostile.pk}" id="id_sessions_0" checked' in page
    for profile in ("default", "seed000", "gemini", "preview"):
        assert f'name="profiles" value="{profile}"' in page


@pytest.mark.django_db
def test_posting_the_form_creates_a_job_and_shows_its_page(browser, user):
    session = store_demo(TOOLS)

    answer = browser.post(
        "/replays/new", {"scope": "selected", "sessions": [session.pk], "profiles": ["default", "gemini"]}
    )

    job = ReplayJob.objects.get()
    assert (answer.status_code, answer["Location"]) == (302, f"/replays/{job.pk}")
    assert (job.created_by, job.profiles, job.total) == (user, ["default", "gemini"], 2)


@pytest.mark.django_db
def test_posting_every_session_with_a_filter(browser):
    store_demo(TOOLS, tags=("picked",))
    store_demo(TOOLS)

    browser.post("/replays/new", {"scope": "all", "tag": "picked", "profiles": ["default"]})

    assert ReplayJob.objects.get().selection == {"all": True, "filter": {"tag": "picked"}}


@pytest.mark.django_db
def test_the_form_says_what_is_missing(browser):
    answer = browser.post("/replays/new", {"scope": "selected", "profiles": ["default"]})

    assert answer.status_code == 200
    assert "&quot;sessions&quot; must be a non-empty list of session ids" in answer.content.decode()
    assert ReplayJob.objects.count() == 0


@pytest.mark.django_db
def test_the_job_page_shows_progress_the_socket_and_cancel(browser, user):
    first, second = store_demo(TOOLS), store_demo(TOOLS)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[first.pk, second.pk])
    replay_job_session_execute(job_id=job.pk, session_id=first.pk, claim="t1")

    page = browser.get(f"/replays/{job.pk}").content.decode()

    assert f'data-ws-path="/ws/replays/{job.pk}"' in page
    assert f'data-cancel-url="/api/replays/{job.pk}/cancel"' in page
    assert '<progress id="job-progress" max="4" value="2">' in page
    assert '<span id="job-done">2</span> of <span id="job-total">4</span> done' in page
    assert '<button type="button" class="btn btn-danger" id="job-cancel">Cancel</button>' in page
    assert 'id="job-results"' not in page  # not before it ends
    assert f'href="/replays/compare?a=default&amp;b=gemini&amp;sessions={first.pk},{second.pk}"' in page
    assert "js/replay_job.js" in page


@pytest.mark.django_db
def test_an_unknown_job_is_404(browser):
    assert browser.get("/replays/999999").status_code == 404


@pytest.mark.django_db
def test_the_compare_page_shows_metrics_and_differences(browser, user):
    session = store_demo(TOOLS, tags=("loop",))
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[session.pk])
    replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="t1")

    page = browser.get(f"/replays/compare?a=default&b=gemini&sessions={session.pk}").content.decode()

    assert '<tr class="differs">' in page
    assert '<td>default</td><td class="num">1</td><td class="num">0</td>' in page
    assert page.count('tool_outcomes · repeated_failing_batch<br><span class="muted">tools 0–') == 3
    (row,) = compare_profiles(
        among=Session.objects.all(), session_ids=[session.pk], profile_a="default", profile_b="gemini"
    ).sessions
    only = row.only["default"]
    assert len(only) > 3
    # the first three of a profile's own detections shown, the others behind "N more", in firing order
    item = r'<div class="only-item">(\w+ · \w+)<br><span class="muted">(\w+ \d+–\d+ at \d+)</span>'
    items = list(re.finditer(item, page))
    shown = [item.groups() for item in items]
    assert shown == [(f"{d.detector} · {d.type}", f"{d.channel} {d.start}–{d.end} at {d.at}") for d in only]
    more = page.index(f"<details><summary>{len(only) - 3} more</summary>")
    assert items[2].start() < more < items[3].start()


@pytest.mark.django_db
def test_the_compare_page_refuses_one_profile_twice(browser):
    page = browser.get("/replays/compare?a=default&b=default").content.decode()
    assert "pick two different profiles" in page


@pytest.mark.django_db
def test_the_replay_list_shows_each_job_and_the_bar_links_to_it(browser, user):
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[store_demo(TOOLS).pk])

    page = browser.get("/replays/").content.decode()
    home = browser.get("/").content.decode()

    assert f'<td><a href="/replays/{job.pk}">#{job.pk}</a></td>' in page
    assert '<td><span class="badge badge-muted">queued</span>\n</td>\n      <td>default, gemini</td>' in page
    assert f'aria-label="replay {job.pk}: 0 of 2 runs done"></progress> 0/2</span>' in page
    assert f'<time datetime="{job.created.isoformat()}">{job.created:%Y-%m-%d %H:%M}</time>' in page
    assert '<a href="/replays/">Replays</a>' in home
    assert '<a href="/replays/" aria-current="page">Replays</a>' in page


@pytest.mark.django_db
def test_the_replay_list_says_what_a_replay_is_when_there_is_none(browser):
    page = browser.get("/replays/").content.decode()
    assert 'id="replays-empty"' in page and '<a class="btn btn-primary" href="/replays/new">New replay</a>' in page
