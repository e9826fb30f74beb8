"""The session list's pager in real headless Chromium: first, next, last and
previous move over exact rows, a filter stays on through every click, and
the controls at either end are shown disabled (a screenshot of each page)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from selenium.webdriver.common.by import By

from loopguard_site.timeline import views
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.browser import click, login, wait_for
from tests.members import member

T0 = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)


def rows(driver) -> list[str]:
    wait_for(driver, "#session-table")
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#session-table tbody td:first-child > a")]


def pager(driver) -> tuple[list[str], list[str], str]:
    """The pager's links, its disabled controls and its count."""
    nav = driver.find_element(By.CSS_SELECTOR, "nav.pager")
    links = [a.text for a in nav.find_elements(By.CSS_SELECTOR, "a")]
    disabled = [s.text for s in nav.find_elements(By.CSS_SELECTOR, "[aria-disabled=true]")]
    return links, disabled, nav.find_element(By.CSS_SELECTOR, ".pager-count").text


def follow(driver, text: str) -> None:
    link = driver.find_element(By.XPATH, f"//nav[@class='pager']//a[normalize-space()='{text}']")
    click(driver, link)
    wait_for(driver, "nav.pager")


@pytest.fixture
def pages_of_five(monkeypatch) -> None:
    """Set before the server process forks (it is asked for first)."""
    monkeypatch.setattr(views, "PAGE_SIZE", 5)


def test_the_pager_walks_the_list_and_keeps_the_filter(
    pages_of_five, chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    user = member(django_user_model.objects.create_user("pager"))
    for n in range(12):  # two sessions a minute: pages split pairs that share a time
        session = session_create_from_events(
            title=f"session {n:02d}", model="gpt" if n % 3 else "other", source_format="events",
            parser_version="events/1", events=[],
        )  # fmt: skip
        Session.objects.filter(pk=session.pk).update(created=T0 + timedelta(minutes=n // 2))
    login(chromium_driver, daphne_live_server.url, user)

    chromium_driver.get(daphne_live_server.url + "/sessions/")
    first = rows(chromium_driver)
    first_pager = pager(chromium_driver)
    chromium_driver.save_screenshot(str(tmp_path / "first.png"))
    follow(chromium_driver, "next →")
    second = rows(chromium_driver)
    follow(chromium_driver, "last page »")
    last = rows(chromium_driver)
    last_pager = pager(chromium_driver)
    chromium_driver.save_screenshot(str(tmp_path / "last.png"))
    follow(chromium_driver, "← previous")
    back = rows(chromium_driver)

    assert first == ["session 11", "session 10", "session 09", "session 08", "session 07"]
    assert first_pager == (["next →", "last page »"], ["« first page", "← previous"], "showing 5 of 12 sessions")
    assert second == ["session 06", "session 05", "session 04", "session 03", "session 02"]
    assert last == ["session 04", "session 03", "session 02", "session 01", "session 00"]
    assert last_pager == (["« first page", "← previous"], ["next →", "last page »"], "showing 5 of 12 sessions")
    assert back == ["session 09", "session 08", "session 07", "session 06", "session 05"]

    chromium_driver.get(daphne_live_server.url + "/sessions/?model=gpt")
    filtered = [rows(chromium_driver)]
    follow(chromium_driver, "next →")
    filtered.append(rows(chromium_driver))
    chromium_driver.save_screenshot(str(tmp_path / "filtered.png"))
    model = chromium_driver.find_element(By.CSS_SELECTOR, "select[name=model] option:checked").text

    assert filtered == [
        ["session 11", "session 10", "session 08", "session 07", "session 05"],
        ["session 04", "session 02", "session 01"],
    ]
    assert (model, pager(chromium_driver)[2]) == ("gpt", "showing 3 of 8 sessions")
