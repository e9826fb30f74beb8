"""The session page as a conversation in real headless Chromium: grouped
detection rows, the address's #detection-N opening the page there, the label
buttons posting to the label API, long reasoning folded, and conversation
items loaded on demand."""

from __future__ import annotations

import random

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from loopguard_site.replay.services import replay_session
from loopguard_site.review.models import Label
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import WAIT_SECONDS, login, wait_for
from tests.members import member

from .conftest import TOOLS_LOOP, replayed_demo

FLASHED = "const f = [...document.querySelectorAll('.flash')]; return f.length ? f.map(e => e.className) : null;"


WORDS = "the queue worker file test value order table column index cache retry limit branch build step".split()


def prose(seed: int, words: int) -> str:
    """Long text with no repetition a detector would call a loop."""
    pick = random.Random(seed)
    return " ".join(pick.choice(WORDS) + str(pick.randrange(1000)) for _ in range(words)) + "."


def wait_until(driver, script):
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.execute_script(script))


@pytest.mark.django_db(transaction=True)
def test_grouped_rows_open_at_the_named_detection_and_label_buttons_post(
    chromium_driver, daphne_live_server, django_user_model
):
    driver = chromium_driver
    session = replayed_demo(TOOLS_LOOP)
    tools = list(session.detections.filter(channel="tools").order_by("event_seq", "id"))
    backoff = list(session.detections.filter(channel="session").order_by("event_seq", "id"))
    user = member(django_user_model.objects.create_user("rita"))
    login(driver, daphne_live_server.url, user)

    last = tools[-1]
    driver.get(f"{daphne_live_server.url}/sessions/{session.pk}/#detection-{last.pk}")
    flashed = wait_until(driver, FLASHED)

    # One row for the loop on the tool calls (every tools detection overlaps it), one for backoff.
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.detection-group")
    assert [r.get_attribute("data-detections") for r in rows] == [
        " ".join(str(d.pk) for d in tools),
        " ".join(str(d.pk) for d in backoff),
    ]
    kinds = {}
    for d in tools:
        kinds[(d.detector, d.type)] = kinds.get((d.detector, d.type), 0) + 1
    badges = [b.text for b in rows[0].find_elements(By.CSS_SELECTOR, ".badge")]
    assert badges == [f"{name} · {kind}" + (f" ×{n}" if n > 1 else "") for (name, kind), n in kinds.items()]
    # Opened at the named detection: its calls and the badge where it fired flash.
    fired = driver.find_element(By.CSS_SELECTOR, f'.badge-fired[data-detection="{last.pk}"]')
    assert "flash" in fired.get_attribute("class")
    assert len(flashed) == last.end - last.start + 1

    rows[0].find_element(By.CSS_SELECTOR, "input[name=note]").send_keys("same failing call")
    rows[0].find_element(By.CSS_SELECTOR, 'button[data-label="true_loop"]').click()
    status = rows[0].find_element(By.CSS_SELECTOR, ".label-status")
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: status.text == "you labelled it true loop")
    labels = Label.objects.filter(session=session, reviewer=user).order_by("detection_id")
    assert [(lab.detection_id, lab.label, lab.note) for lab in labels] == [
        (d.pk, "true_loop", "same failing call") for d in sorted(tools, key=lambda d: d.pk)
    ]
    assert (
        rows[0].find_element(By.CSS_SELECTOR, 'button[data-label="true_loop"]').get_attribute("aria-pressed") == "true"
    )

    rows[1].find_element(By.CSS_SELECTOR, 'button[data-label="false_positive"]').click()
    status = rows[1].find_element(By.CSS_SELECTOR, ".label-status")
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: status.text == "you labelled it false positive")
    assert sorted(Label.objects.filter(label="false_positive").values_list("detection_id", flat=True)) == sorted(
        d.pk for d in backoff
    )

    driver.find_element(By.ID, "session-clean").click()
    wait_for(driver, '#session-clean[aria-pressed="true"]')
    assert Label.objects.get(session=session, item="session").label == "clean"

    driver.refresh()  # the reviewer's labels are shown again
    statuses = [wait_for(driver, "tr.detection-group .label-status")] + driver.find_elements(
        By.CSS_SELECTOR, "tr.detection-group .label-status"
    )[1:]
    assert [s.text for s in statuses] == ["you labelled it true loop", "you labelled it false positive"]
    assert driver.find_element(By.ID, "session-label-status").text == "you labelled it clean"


@pytest.mark.django_db(transaction=True)
def test_the_conversation_shows_turns_user_messages_and_folds_long_reasoning(
    chromium_driver, daphne_live_server, django_user_model
):
    events = [{"type": "user", "text": "<b>Count</b>\nplease"}]
    for n in range(80):  # 80 turns: more than the page shows at first
        events += [
            {"type": "turn"},
            {"type": "reasoning", "text": f"Turn {n} thinking. " + prose(n, 300)},
            {"type": "content", "text": f"Answer {n}."},
            {"type": "finish", "reason": "stop"},
        ]
    session = session_create_from_events(title="long", model="", source_format="events", parser_version="1",
                                         events=events)  # fmt: skip
    replay_session(session=session, profile_name="default")
    assert session.detections.count() == 0
    user = member(django_user_model.objects.create_user("rita"))
    driver = chromium_driver
    login(driver, daphne_live_server.url, user)
    driver.get(f"{daphne_live_server.url}/sessions/{session.pk}/")

    user_message = wait_for(driver, ".msg-user .msg-text")
    assert user_message.text == "<b>Count</b>\nplease"  # escaped, its newline kept
    turns = driver.find_elements(By.CSS_SELECTOR, ".conv-turn h3")
    shown = len(turns)
    assert [t.text for t in turns] == [f"TURN {n}" for n in range(1, shown + 1)]  # uppercased by CSS
    folded = driver.execute_script("return [...document.querySelectorAll('.msg-reasoning details')].map(d => d.open)")
    assert folded == [False] * shown  # each is long and holds no detection
    assert driver.find_elements(By.CSS_SELECTOR, ".msg-content")[0].text == "Assistant\nAnswer 0."

    # Items: the user message, then turn, reasoning, content, finish per turn. The first 60 show.
    assert shown == 15
    gaps = "return [...document.querySelectorAll('button.item-gap')].map(b => [+b.dataset.start, +b.dataset.end])"
    assert driver.execute_script(gaps) == [[60, 321]]
    driver.execute_script("document.querySelector('button.item-gap').click()")
    assert wait_until(driver, gaps.replace("return ", "const g = ") + "; return g[0][0] === 260 && g;") == [[260, 321]]
    driver.execute_script("document.querySelector('button.item-gap').click()")
    wait_until(driver, "return !document.querySelector('button.item-gap')")
    turns = driver.find_elements(By.CSS_SELECTOR, ".conv-turn h3")
    assert [t.text for t in turns] == [f"TURN {n}" for n in range(1, 81)]
