"""The label flows in a real headless Chromium against the lab served by Daphne."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import WebDriverWait

from loopguard_site.review.models import Label
from tests.browser import WAIT_SECONDS, login, wait_for

from .conftest import REASONING_LOOP, replayed


@pytest.mark.django_db(transaction=True)
def test_pressing_f_in_the_queue_stores_a_false_positive_and_moves_on(chromium_driver, daphne_live_server, ann):
    session = replayed(REASONING_LOOP)
    (detection,) = session.detections.all()
    login(chromium_driver, daphne_live_server.url, ann)
    chromium_driver.get(daphne_live_server.url + "/review/?detector=text_loop")
    span = wait_for(chromium_driver, "#review-item .detection-span")
    reasoning = "".join(e.data["text"] for e in session.events.filter(type="reasoning").order_by("seq"))
    assert span.get_attribute("textContent") == reasoning[1657:2511]  # the repeated span, as text

    ActionChains(chromium_driver).send_keys("n").send_keys("a riddle's two exits").perform()
    note = chromium_driver.switch_to.active_element
    assert note.get_attribute("id") == "label-note"
    note.send_keys("\ue00c")  # Escape leaves the note, so the next key is a shortcut
    ActionChains(chromium_driver).send_keys("f").perform()
    wait_for(chromium_driver, "#queue-empty")

    (label,) = Label.objects.all()
    assert (label.detection_id, label.reviewer, label.label, label.note) == (
        detection.pk,
        ann,
        "false_positive",
        "a riddle's two exits",
    )
    assert "ann: 1/1" in chromium_driver.find_element("css selector", ".queue-progress").text


@pytest.mark.django_db(transaction=True)
def test_selecting_text_on_the_session_page_stores_a_missed_loop(chromium_driver, daphne_live_server, ann):
    session = replayed(REASONING_LOOP)
    login(chromium_driver, daphne_live_server.url, ann)
    chromium_driver.get(f"{daphne_live_server.url}/sessions/{session.pk}/")
    wait_for(chromium_driver, "#missed-loop button")
    piece = wait_for(chromium_driver, '.channel-text[data-channel="reasoning"] .piece[data-s="0"]')
    chromium_driver.execute_script(
        """const text = arguments[0].firstChild;
        const range = document.createRange();
        range.setStart(text, 3);
        range.setEnd(text, 10);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);""",
        piece,
    )
    button = chromium_driver.find_element("css selector", "#missed-loop button")
    WebDriverWait(chromium_driver, WAIT_SECONDS).until(lambda d: button.is_enabled())
    assert button.text == "Mark reasoning 3–10 as a missed loop"
    button.click()
    status = chromium_driver.find_element("css selector", "#missed-loop [role=status]")
    WebDriverWait(chromium_driver, WAIT_SECONDS).until(lambda d: status.text)
    assert status.text == "missed loop stored: reasoning 3–10"
    (label,) = Label.objects.all()
    assert (label.session, label.label, label.channel, label.start, label.end) == (
        session,
        "missed_loop",
        "reasoning",
        3,
        10,
    )
