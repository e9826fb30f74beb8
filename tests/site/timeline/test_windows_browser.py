"""A long session's page (read from its stored layout) in headless
Chromium: the next window of the conversation loads on demand with its
exact text, and an address naming a detection deep in the stream opens
the window that holds it."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from loopguard_site.replay.models import Detection
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import click, wait_for
from tests.members import member
from tests.site.transcripts.test_layout_rows import turn_events

from .test_session_page_browser import open_page, screenshot, wait_until

TURNS = 60  # 300 events, 240 items: turn n's items are 4n..4n+3


@pytest.fixture
def windowed(settings):
    settings.LOOPGUARD_LAYOUT_MIN_EVENTS = 50  # before the server starts: it reads the settings it forked with


def detections_on_content(session, turns: list[int]) -> list[Detection]:
    """A text_loop detection on the content of each of `turns` (offsets 10 n .. 10 n + 5, fired at 10 n + 9)."""
    return [
        Detection.objects.create(
            session=session, profile="default", event_seq=5 * n + 3, detector="text_loop", type="block_cycle",
            channel="content", start=10 * n, end=10 * n + 5, at=10 * n + 9, unit="<b>", period=3, repeats=2,
            action="stop", message="m", turn=n + 1,
        )
        for n in turns
    ]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_later_items_load_on_demand_and_a_deep_detection_opens_its_window(
    windowed, chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    session = session_create_from_events(
        title="long", model="", source_format="events", parser_version="t", events=turn_events(0, TURNS)
    )
    # 21 detections: the page opens the window of the first (turn 15), the others load when asked for.
    *_, deep = detections_on_content(session, [*range(15, 35), 50])
    user = member(django_user_model.objects.create_user("viewer"))

    open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "long-session")

    shown = "return [...document.querySelectorAll('.conversation [data-item]')].map(e => +e.dataset.item)"
    first_shown = driver.execute_script(shown)
    assert first_shown == [*range(0, 66)]  # the head (0..59) and the window of turn 15's content (item 62), merged
    gap = driver.find_element(By.CSS_SELECTOR, "button.item-gap")
    assert gap.text == "… show items 66–240 of the conversation …"

    click(driver, gap)

    wait_until(driver, "return document.querySelector('.conversation [data-item=\"239\"]')")
    assert driver.execute_script(shown) == list(range(240))
    assert driver.find_elements(By.CSS_SELECTOR, "button.item-gap") == []
    text = "return document.querySelector('.conversation [data-item=\"{}\"] {}').textContent"
    assert driver.execute_script(text.format(4 * 40, "h3")) == "Turn 41"
    assert driver.execute_script(text.format(4 * 40 + 1, ".channel-text")) == "think 40;"
    assert driver.execute_script(text.format(4 * 40 + 2, ".channel-text")) == "<b>40</b>&"
    assert driver.execute_script(text.format(4 * 40 + 3, ".tool-index")) == "#40"
    assert (
        driver.execute_script(text.format(4 * 40 + 3, ".badge-repeat")) == "repeat of #0 · call 41 with these arguments"
    )
    assert driver.execute_script(text.format(4 * 40 + 3, ".tool-output")) == "<script>fail 40</script>"
    screenshot(driver, tmp_path, "long-session-later")

    # An address naming the deep detection: the page loads the window of items that holds it and flashes it.
    driver.get(f"{daphne_live_server.url}/sessions/{session.pk}/?profile=default#detection-{deep.pk}")
    wait_for(driver, "#timeline-plot.js-plotly-plot .scatterlayer .trace")
    flashed = wait_until(
        driver, "const f = [...document.querySelectorAll('.flash')].map(e => e.textContent); return f[2] === '50' && f;"
    )
    assert flashed == ["", "<b>", "50", ""]  # the onset marker, the unit, its repetition, the firing marker
    assert driver.execute_script(shown) == [*range(0, 66), *range(199, 206)]
    screenshot(driver, tmp_path, "long-session-anchor")
    assert driver.execute_script("return pageErrors") == []
