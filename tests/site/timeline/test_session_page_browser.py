"""The session page in a real headless Chromium: highlights, the Plotly
timeline, clicks that scroll the text to a span, on-demand windows, and a
bounded DOM for a 1 MB / 100,000-event session."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from loopguard_site.replay.services import replay_session
from loopguard_site.timeline.conversation import detection_groups
from loopguard_site.timeline.panels import HEAD_CHARS
from loopguard_site.timeline.selectors import session_detection_rows
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import WAIT_SECONDS, click, login, wait_for
from tests.members import member

from .conftest import REASONING_LOOP, TOOLS_LOOP, monitor_results, replayed_demo

# Where a copy of each screenshot goes for a human to look at (unset: only the test's tmp folder).
SCREENSHOT_DIR = os.environ.get("LOOPGUARD_SCREENSHOT_DIR", "")

PLOT_TRACES = "#timeline-plot .cartesianlayer .scatterlayer .trace"  # the plot's, not the range slider's copies
FLASHED = """return [...document.querySelectorAll('.flash')].map(e =>
    [e.className, e.dataset.detection || e.dataset.detections || e.dataset.index || '']);"""
FLASHED_PIECES = """const f = [...document.querySelectorAll('.piece.flash')];
return f.length ? f.map(e => [+e.dataset.s, +e.dataset.e]) : null;"""
# Is the first flashed element inside the visible part of its scroll box?
FLASH_VISIBLE = """const el = document.querySelector('.flash');
const box = el.closest('.channel-text, .tool-list').getBoundingClientRect();
const r = el.getBoundingClientRect();
return r.top >= box.top - 1 && r.top <= box.bottom && el.closest('.channel-text, .tool-list').scrollTop;"""


def screenshot(driver, tmp_path, name):
    shot = tmp_path / f"{name}.png"
    driver.save_screenshot(str(shot))
    if SCREENSHOT_DIR:
        shutil.copy(shot, os.path.join(SCREENSHOT_DIR, shot.name))
    return shot


# Collects the page's script errors (uncaught, rejected, console.error) from before its first script runs.
CATCH_ERRORS = """window.pageErrors = [];
addEventListener('error', e => pageErrors.push(String(e.message)));
addEventListener('unhandledrejection', e => pageErrors.push(String(e.reason)));
const consoleError = console.error;
console.error = (...args) => { pageErrors.push(args.map(String).join(' ')); consoleError(...args); };"""


def open_page(driver, server, user, path, tmp_path, name):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_ERRORS})
    login(driver, server.url, user)
    driver.get(server.url + path)
    wait_for(driver, "#timeline-plot.js-plotly-plot .scatterlayer .trace")
    return screenshot(driver, tmp_path, name)


def wait_until(driver, script):
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.execute_script(script))


@pytest.mark.django_db(transaction=True)
def test_the_page_highlights_the_loop_draws_the_timeline_and_scrolls_to_a_clicked_detection(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    session = replayed_demo(REASONING_LOOP, ("default", "seed000"))
    (d,) = session.detections.all()
    user = member(django_user_model.objects.create_user("viewer"))

    shot = open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "riddle")

    assert shot.stat().st_size > 10_000
    assert len(driver.find_elements(By.CSS_SELECTOR, ".hl-unit")) == 1
    assert len(driver.find_elements(By.CSS_SELECTOR, ".hl-rep")) == len(range(d.start, d.end, d.period)) - 1
    assert len(driver.find_elements(By.CSS_SELECTOR, ".marker-onset, .marker-fired")) == 2
    names = driver.execute_script("return document.getElementById('timeline-plot').data.map(t => t.name)")
    assert names == ["reasoning", "turns", "repeated regions", "detection: stop"]
    assert len(driver.find_elements(By.CSS_SELECTOR, PLOT_TRACES)) == 4

    click(driver, driver.find_element(By.CSS_SELECTOR, f'.detection-link[data-detection="{d.pk}"]'))

    flashed = wait_until(driver, FLASHED.replace("return", "const f =", 1) + " return f.length ? f : null;")
    tiles = len(range(d.start, d.end, d.period))
    assert flashed[0] == ["marker marker-onset flash", str(d.pk)]
    assert [c for c, _ in flashed[1:-1]][:1] == ["piece hl-region hl-unit flash"]
    assert len(flashed) == 2 + tiles and flashed[-1] == ["marker marker-fired flash", str(d.pk)]
    assert driver.execute_script(FLASH_VISIBLE) > 0  # scrolled down to the onset, which is now in view
    assert screenshot(driver, tmp_path, "riddle-detection").stat().st_size > 10_000

    # A real click on the detection's marker in the Plotly timeline does the same.
    driver.execute_script("document.querySelectorAll('.flash').forEach(e => e.classList.remove('flash'));"
                          "document.querySelector('.channel-text').scrollTop = 0;")  # fmt: skip
    marker = driver.find_elements(By.CSS_SELECTOR, f"{PLOT_TRACES}:last-child .point")
    assert len(marker) == 1
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", marker[0])
    ActionChains(driver).move_to_element(marker[0]).perform()
    hover = wait_for(driver, "#timeline-plot .hoverlayer .hovertext").text
    assert f"{d.detector} · {d.type} · {d.action}" in hover and f"period {d.period} · repeats {d.repeats}" in hover
    ActionChains(driver).click().perform()
    flashed = wait_until(driver, FLASHED.replace("return", "const f =", 1) + " return f.length ? f : null;")
    assert flashed[0] == ["marker marker-onset flash", str(d.pk)] and len(flashed) == 2 + tiles
    assert driver.execute_script(FLASH_VISIBLE) > 0

    # The gap after the detection's window loads on demand, highlighted the same way.
    gap = driver.find_element(By.CSS_SELECTOR, ".channel-text button.gap:last-of-type")
    end = int(gap.get_attribute("data-end"))
    driver.execute_script("arguments[0].click()", gap)
    wait_until(driver, f"return document.querySelector('.text-window[data-end=\"{end}\"]')")
    assert driver.find_elements(By.CSS_SELECTOR, ".channel-text button.gap") == []

    # The profile selector reloads the page with seed000's checkpoint evaluations; a click on one flashes its range.
    Select(driver.find_element(By.ID, "profile-select")).select_by_value("seed000")
    wait_until(driver, "return location.search === '?profile=seed000' && document.querySelector('.js-plotly-plot')")
    lanes = driver.execute_script("return document.getElementById('timeline-plot').layout.yaxis.categoryarray")
    assert lanes == ["reasoning", "turns", "reasoning_checkpoint checkpoints"]
    checkpoint = driver.find_elements(By.CSS_SELECTOR, f"{PLOT_TRACES}:last-child .point")[0]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", checkpoint)
    ActionChains(driver).move_to_element(checkpoint).click().perform()
    flashed = wait_until(driver, FLASHED_PIECES)
    first = min(monitor_results(REASONING_LOOP, "seed000")[1], key=lambda c: c["checkpoint"])
    assert flashed[0][0] <= first["start"] < flashed[0][1] and flashed[-1][0] < first["end"] <= flashed[-1][1]
    assert driver.execute_script("return pageErrors") == []


@pytest.mark.django_db(transaction=True)
def test_the_tool_list_marks_repeats_and_a_tool_detection_scrolls_to_its_calls(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    session = replayed_demo(TOOLS_LOOP)
    first = session.detections.order_by("event_seq", "id").first()
    user = member(django_user_model.objects.create_user("viewer"))

    open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "tools")

    # The page opens flashing the first detection: calls start..end-1 of its region, then the badge where it fired.
    opened = wait_until(driver, FLASHED.replace("return", "const f =", 1) + " return f.length ? f : null;")
    rows = driver.find_elements(By.CSS_SELECTOR, ".tool-row")
    classes = [r.get_attribute("class").replace(" flash", "") for r in rows]
    assert classes == ["tool-row failed"] + ["tool-row repeat failed"] * 3
    expected = [*(r.get_attribute("data-detections") for r in rows[: first.end])] + [str(first.pk)]
    assert [index for _, index in opened] == expected
    driver.execute_script("document.querySelectorAll('.flash').forEach(e => e.classList.remove('flash'))")
    click(driver, driver.find_element(By.CSS_SELECTOR, f'.detection-link[data-detection="{first.pk}"]'))
    flashed = wait_until(driver, FLASHED.replace("return", "const f =", 1) + " return f.length ? f : null;")
    assert [index for _, index in flashed] == expected
    assert driver.execute_script("return pageErrors") == []


@pytest.mark.django_db(transaction=True)
def test_the_time_axis_toggle_redraws_the_timeline_in_seconds(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    session = replayed_demo("claude-code-thinking-session.jsonl")
    user = member(django_user_model.objects.create_user("viewer"))
    open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "claude-code")
    title = "return document.querySelector('#timeline-plot .g-xtitle').textContent"
    assert driver.execute_script(title).startswith("stream position")

    click(driver, driver.find_element(By.CSS_SELECTOR, '.axis-toggle button[data-axis="time"]'))

    assert wait_until(driver, title + " === 'time (s)'")
    pressed = [b.get_attribute("aria-pressed") for b in driver.find_elements(By.CSS_SELECTOR, ".axis-toggle button")]
    assert pressed == ["false", "true"]
    assert driver.execute_script("return pageErrors") == []


@pytest.mark.django_db(transaction=True)
def test_a_window_that_cannot_load_is_said_on_the_page(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    session = replayed_demo(REASONING_LOOP, profiles=())
    user = member(django_user_model.objects.create_user("viewer"))
    open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "gone")
    gap = driver.find_element(By.CSS_SELECTOR, ".channel-text button.gap")
    Session.objects.filter(pk=session.pk).delete()

    driver.execute_script("arguments[0].click()", gap)

    status = wait_for(driver, "#session-status:not([hidden])")
    assert status.text == f"loading reasoning {HEAD_CHARS}–4449: HTTP 404"
    assert driver.execute_script("return pageErrors") == [f"Error: {status.text}"]
    assert driver.find_elements(By.CSS_SELECTOR, ".channel-text button.gap") == [gap]  # still there, to retry


def big_session_events() -> list[dict]:
    """100,000 events, 975,000 characters of reasoning, 25,000 tool calls
    of which the detectors flag nearly every one."""
    events = []
    for i in range(25_000):
        events.append({"type": "turn"})
        events.append({"type": "reasoning", "text": f"Step {i:06d}: look.\n"})
        events.append({"type": "reasoning", "text": "Check the file again"})
        events.append({"type": "tool_call", "name": "read_file", "args": {"path": f"f{i % 3}.txt"}})
    return events


@pytest.mark.django_db(transaction=True)
def test_a_one_megabyte_session_renders_a_bounded_page(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    driver = chromium_driver
    events = big_session_events()
    session = session_create_from_events(
        title="big", model="", source_format="events", parser_version="1", events=events
    )
    replay_session(session=session, profile_name="default")
    detections = session.detections.count()
    user = member(django_user_model.objects.create_user("viewer"))

    open_page(driver, daphne_live_server, user, f"/sessions/{session.pk}/", tmp_path, "big")

    assert (len(events), sum(len(e.get("text", "")) for e in events), detections > 20_000) == (100_000, 975_000, True)
    counts = driver.execute_script("""return {
        all: document.getElementsByTagName('*').length,
        pieces: document.querySelectorAll('.piece').length,
        rows: document.querySelectorAll('.tool-row').length,
        listed: document.querySelectorAll('.detection-link').length,
        points: document.getElementById('timeline-plot').data.reduce((n, t) => n + t.x.length, 0),
        text: [...document.querySelectorAll('.channel-text')].reduce((n, e) => n + e.textContent.length, 0),
    }""")
    # The detections on the tool calls overlap all along: few loops, each listed once.
    groups = detection_groups(session_detection_rows(session_id=session.pk, profile="default"))
    assert counts["listed"] == min(len(groups), 100)
    assert counts["rows"] <= 50 + 20 * 100
    assert counts["text"] <= 3000 + 20 * 8000 + 2000
    assert counts["points"] <= 400 * 3 * 20
    assert counts["all"] < 20_000

    # The timeline opened on the first detection; shown whole (one zoom, answered by the server),
    # its rightmost marker points far beyond the windows shown: a click loads its window, then flashes it.
    driver.execute_script(f"Plotly.relayout('timeline-plot', {{'xaxis.range': [0, {len(events)} * 10]}})")
    wait_until(driver, "return performance.getEntriesByType('resource').some(e => e.name.includes('/figure?'))")
    time.sleep(0.5)  # the zoomed figure is drawn once fetched
    driver.execute_script("document.querySelectorAll('.flash').forEach(e => e.classList.remove('flash'))")
    trace = driver.execute_script("""const data = document.getElementById('timeline-plot').data;
        const last = data.map(t => Math.max(...t.x.filter(x => x !== null)));
        const clickable = (t) => !t.mode.includes('lines') && t.name !== 'turns';  // turn marks scroll nowhere
        let best = -1;
        data.forEach((t, i) => { if (clickable(t) && (best < 0 || last[i] > last[best])) best = i; });
        return best;""")
    points = driver.find_elements(By.CSS_SELECTOR, f"{PLOT_TRACES}:nth-child({trace + 1}) .point")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", points[-1])
    ActionChains(driver).move_to_element(points[-1]).click().perform()
    flashed = wait_until(driver, "return [...document.querySelectorAll('.tool-row.flash')].map(e => +e.dataset.index)")
    assert min(flashed) > 24_000
    assert driver.execute_script("return document.getElementsByTagName('*').length") < counts["all"] + 2 * 100 * 10

    # Zooming in fetches the stretch in full detail: every turn of it (one each 40 positions) instead of bins.
    turns = "return document.getElementById('timeline-plot').data.find(t => t.name === 'turns').x"
    assert len(driver.execute_script(turns)) == 400
    driver.execute_script("Plotly.relayout('timeline-plot', {'xaxis.range[0]': 0, 'xaxis.range[1]': 3960})")
    zoomed = wait_until(driver, turns.replace("return ", "const x = ") + "; return x[x.length - 1] === 3960 && x;")
    assert zoomed == list(range(0, 3961, 40))
    driver.execute_script("Plotly.relayout('timeline-plot', {'xaxis.autorange': true})")
    # The session keeps a stored layout: its whole timeline is the block counts kept with it, in bins
    # of two 2,048-position blocks, each with a turn.
    whole = len(range(0, 1_000_000 // 2048 + 1, 2))
    assert (
        len(wait_until(driver, turns.replace("return ", "const x = ") + f"; return x.length === {whole} && x;"))
        == whole
    )
    assert driver.execute_script("return pageErrors") == []
