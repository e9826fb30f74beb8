"""The job page in real headless Chromium, served by Daphne on the test
database and Redis: the progress bar moves as runs finish elsewhere (over
the job's WebSocket), and Cancel stops the job, goes away, and the page
shows the job's results."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from loopguard_site.celery import app
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from tests.browser import WAIT_SECONDS, login, wait_for

from .conftest import store_demo

TOOLS = "loop-tools-readmediafile.jsonl"


def shown(browser) -> tuple:
    field = browser.find_element
    return (
        field(By.ID, "job-state").text,
        field(By.ID, "job-done").text,
        field(By.ID, "job-total").text,
        field(By.ID, "job-failed").text,
        field(By.ID, "job-progress").get_attribute("value"),
        bool(browser.find_elements(By.ID, "job-cancel")),
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("live_services")
def test_the_progress_bar_follows_the_job_and_cancel_stops_it(
    daphne_live_server, chromium_driver, user, monkeypatch, unconsumed_queue
):
    # No worker takes this job: the test finishes its runs itself, as one would.
    monkeypatch.setitem(app.conf, "task_default_queue", unconsumed_queue)
    sessions = [store_demo(TOOLS) for _ in range(3)]
    job = replay_job_create(user=user, profiles=["default"], session_ids=[s.pk for s in sessions])
    browser = chromium_driver
    login(browser, daphne_live_server.url, user)
    browser.get(f"{daphne_live_server.url}/replays/{job.pk}")
    wait = WebDriverWait(browser, WAIT_SECONDS)
    initially = shown(browser)
    wait_for(browser, '#replay-job[data-socket="following"]')  # its snapshot came: no push can be missed

    replay_job_session_execute(job_id=job.pk, session_id=sessions[0].pk, claim="t1")
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "job-done"), "1"))
    after_one = shown(browser)
    browser.find_element(By.ID, "job-cancel").click()
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "job-state"), "cancelled"))
    rows = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")[:3]]
        for row in wait_for(browser, "#job-results").find_elements(By.CSS_SELECTOR, "tbody tr")
    ]  # the page reloaded with the results of the ended job

    assert initially == ("queued", "0", "3", "0", "0", True)
    assert after_one == ("running", "1", "3", "0", "1", True)
    assert shown(browser) == ("cancelled", "1", "3", "0", "1", False)
    assert rows == [
        [f"#{sessions[0].pk} {TOOLS}", "default", "loop"],
        [f"#{sessions[1].pk} {TOOLS}", "default", "cancelled"],
        [f"#{sessions[2].pk} {TOOLS}", "default", "cancelled"],
    ]
    job.refresh_from_db()
    assert (job.state, job.done) == ("cancelled", 1)
    assert sorted(job.runs.values_list("state", flat=True)) == ["cancelled", "cancelled", "done"]
