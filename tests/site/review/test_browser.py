"""The label flows in a real headless Chromium against the lab served by Daphne."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import WebDriverWait

from loopguard_site.review.models import Label
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import WAIT_SECONDS, click, login, wait_for

from .conftest import REASONING_LOOP, TOOLS_LOOP, replayed


@pytest.mark.django_db(transaction=True)
def test_pressing_f_in_the_queue_stores_a_false_positive_and_moves_on(chromium_driver, daphne_live_server, ann):
    session = replayed(REASONING_LOOP)
    (detection,) = session.detections.all()
    login(chromium_driver, daphne_live_server.url, ann)
    chromium_driver.get(daphne_live_server.url + "/review/?detector=text_loop")
    span = wait_for(chromium_driver, "#review-item .detection-span")
    reasoning = "".join(e.data["text"] for e in session.events.filter(type="reasoning").order_by("seq"))
    assert span.get_attribute("textContent") == reasoning[1654:2510]  # the repeated span, as text

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


SELECT_TEXT = """const [from, to] = arguments;
const range = document.createRange();
range.setStart(from[0].firstChild, from[1]);
range.setEnd(to[0].firstChild, to[1]);
const selection = window.getSelection();
selection.removeAllRanges();
selection.addRange(range);"""


def mark_selection(driver, start: tuple, end: tuple) -> str:
    """Select from (element, offset in its first text node) to (element,
    offset), press the missed-loop button; the button's text before it."""
    driver.execute_script(SELECT_TEXT, list(start), list(end))
    button = driver.find_element("css selector", "#missed-loop button")
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: button.is_enabled())
    text = button.text
    click(driver, button)
    status = driver.find_element("css selector", "#missed-loop [role=status]")
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: status.text)
    assert status.text.startswith("missed loop stored: "), status.text
    return text


@pytest.mark.django_db(transaction=True)
def test_selecting_text_on_the_session_page_stores_a_missed_loop(chromium_driver, daphne_live_server, ann):
    session = replayed(REASONING_LOOP)
    login(chromium_driver, daphne_live_server.url, ann)
    chromium_driver.get(f"{daphne_live_server.url}/sessions/{session.pk}/")
    wait_for(chromium_driver, "#missed-loop button")
    piece = wait_for(chromium_driver, '.channel-text[data-channel="reasoning"] .piece[data-s="0"]')

    assert mark_selection(chromium_driver, (piece, 3), (piece, 10)) == "Mark reasoning 3–10 as a missed loop"
    (label,) = Label.objects.all()
    assert (label.session, label.label, label.channel, label.start, label.end) == (
        session,
        "missed_loop",
        "reasoning",
        3,
        10,
    )


@pytest.mark.django_db(transaction=True)
def test_offsets_count_code_points_and_tool_rows_count_calls(chromium_driver, daphne_live_server, ann):
    emoji = session_create_from_events(
        title="emoji", model="m", source_format="events", parser_version="",
        events=[{"type": "content", "text": "🙂🙂 hello"}, {"type": "content", "text": " world"}],
    )  # fmt: skip
    tools = replayed(TOOLS_LOOP)
    login(chromium_driver, daphne_live_server.url, ann)

    chromium_driver.get(f"{daphne_live_server.url}/sessions/{emoji.pk}/")
    piece = wait_for(chromium_driver, '.channel-text[data-channel="content"] .piece[data-s="0"]')
    # UTF-16 offset 4 is after the two emoji: code point 2
    assert mark_selection(chromium_driver, (piece, 4), (piece, 9)) == "Mark content 2–7 as a missed loop"

    chromium_driver.get(f"{daphne_live_server.url}/sessions/{tools.pk}/")
    first = wait_for(chromium_driver, '.tool-list[data-channel="tools"] [data-index="1"] .tool-name')
    last = wait_for(chromium_driver, '.tool-list[data-channel="tools"] [data-index="2"] .tool-name')
    assert mark_selection(chromium_driver, (first, 0), (last, 2)) == "Mark tools 1–3 as a missed loop"

    spans = sorted(Label.objects.values_list("session_id", "channel", "start", "end"))
    assert spans == [(emoji.pk, "content", 2, 7), (tools.pk, "tools", 1, 3)]
