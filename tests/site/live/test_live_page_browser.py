"""The live session page in real headless Chromium, served by Daphne on the
test database and Redis: the text appends, and the loop banner appears with
the detection's message the moment the producer's message is stored.
Transcript text stays text (textContent), never markup."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from loopguard_site.live.services import live_ingest
from loopguard_site.replay.models import Detection
from tests.browser import WAIT_SECONDS, login

HOSTILE = {"type": "content", "text": "<img src=x onerror=\"document.title='pwned'\">"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("live_services")
def test_the_banner_shows_the_loop_the_moment_it_is_caught(
    daphne_live_server, chromium_driver, live_session, producer, loop_events, loop_stop
):
    browser = chromium_driver
    login(browser, daphne_live_server.url, producer.user)
    browser.get(f"{daphne_live_server.url}/live/{live_session.pk}")
    wait = WebDriverWait(browser, WAIT_SECONDS)
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "live-status"), "following live"))
    banner = browser.find_element(By.ID, "loop-banner")
    assert not banner.is_displayed()

    live_ingest(session_id=live_session.pk, seq=1, events=[HOSTILE])
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "live-events"), "1"))
    assert not banner.is_displayed()
    live_ingest(session_id=live_session.pk, seq=2, events=loop_events[: loop_stop.seq])
    wait.until(expected_conditions.visibility_of(banner))

    detection = Detection.objects.get(session=live_session)
    content = browser.find_element(By.CSS_SELECTOR, '[data-channel="content"]')
    assert browser.find_element(By.ID, "loop-banner-title").text == "Loop detected — stopped:"
    assert browser.find_element(By.ID, "loop-banner-message").text == detection.message
    assert browser.find_element(By.ID, "live-state").text == "stopped"
    assert browser.find_element(By.ID, "live-status").text == "stopped: the producer was told to abort"
    assert browser.find_element(By.ID, "live-events").text == str(1 + loop_stop.seq)
    pieces = [HOSTILE["text"]] + [event["text"] for event in loop_events[1 : loop_stop.seq]]
    assert content.get_attribute("textContent") == pieces[0] + "turn 1" + "".join(pieces[1:])
    assert content.find_elements(By.TAG_NAME, "img") == []
    assert browser.title != "pwned"
    # highlighted: every piece overlapping the detection's region [start, end)
    starts = [sum(map(len, pieces[:i])) for i in range(len(pieces))]
    expected = [p for p, s in zip(pieces, starts, strict=True) if s + len(p) > detection.start and s < detection.end]
    marked = content.find_elements(By.CSS_SELECTOR, ".loop-region")
    assert [piece.get_attribute("textContent") for piece in marked] == expected
    assert len(expected) >= 10
    # the timeline grew: the session page's figure, with the detection's marker
    marked_ids = """
        const plot = document.getElementById("live-timeline");
        return (plot.data || []).flatMap((trace) => trace.customdata || [])
            .filter((data) => data[0] === "detection").map((data) => data[1]);
    """
    wait.until(lambda driver: driver.execute_script(marked_ids) == [detection.pk])
    items = browser.find_elements(By.CSS_SELECTOR, "#live-detections li")
    assert [item.get_attribute("class") for item in items] == ["action-stop"]
