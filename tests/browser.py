"""Headless Chromium for browser tests, and a Daphne live server.

Make the fixtures visible in your tests' conftest.py:

    from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures)

then, in a test module (`login`, `wait_for` are plain helpers):

    from tests.browser import login, wait_for

    def test_page(chromium_driver, daphne_live_server, django_user_model):
        user = member(django_user_model.objects.create_user("u"))
        login(chromium_driver, daphne_live_server.url, user)
        chromium_driver.get(daphne_live_server.url + "/")

Debian's `/usr/bin/chromium` and `/usr/bin/chromedriver` only: Selenium is
given both paths, so Selenium Manager never looks for (or downloads) a
browser or driver. Each driver gets a fresh profile directory and no
network features beyond the page it is sent to.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)
WAIT_SECONDS = 20  # longest a test waits for an element or a page


def new_chromium_driver(profile_dir: str):
    """A headless Chromium WebDriver using the profile in `profile_dir`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing: apt-get install -y chromium chromium-driver", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)  # tests wait explicitly for what they need
    driver.set_page_load_timeout(WAIT_SECONDS)
    return driver


@pytest.fixture
def chromium_driver() -> Iterator:
    """A fresh headless Chromium (new profile), quit after the test."""
    with tempfile.TemporaryDirectory(prefix="loopguard-chromium-") as profile_dir:
        driver = new_chromium_driver(profile_dir)
        try:
            yield driver
        finally:
            driver.quit()


def login(driver, live_server_url: str, user) -> None:
    """Log `user` in for `driver`: a Django session made server-side, its
    cookie set in the browser (no password, no login form)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    driver.get(live_server_url + "/static/css/loopguard.css")  # any page of the host, to own its cookies
    driver.add_cookie(
        {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "path": "/"}
    )


def click(driver, element) -> None:
    """Click `element` once scrolled to the middle of the window, as a user
    would: the sticky top bar covers the top edge, where Selenium's own
    scroll would leave an element above the view."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def wait_for(driver, css: str):
    """The first element matching `css`, once it exists (up to WAIT_SECONDS)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_SECONDS).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css))
    )


@dataclass(frozen=True)
class LiveServer:
    url: str  # http://host:port
    ws_url: str  # ws://host:port


def _application():
    # built in the server process, after the fork (as channels' live server
    # does); errors inside the app go to stderr, which pytest shows on failure
    import logging

    logging.basicConfig(level=logging.ERROR)
    from loopguard_site.asgi import application

    return application


@contextlib.contextmanager
def daphne_server() -> Iterator[LiveServer]:
    """The lab's ASGI app served by Daphne in a child process on a free port,
    against the database Django is configured with (the tests' one)."""
    from daphne.testing import DaphneProcess
    from django.db import connections

    if any(c.vendor == "sqlite" and c.is_in_memory_db() for c in connections.all()):
        pytest.fail("daphne_live_server needs a database file or PostgreSQL, not in-memory SQLite", pytrace=False)
    connections.close_all()  # the forked server must not share the parent's connections
    server = DaphneProcess("127.0.0.1", _application)
    server.start()
    while not server.ready.wait(timeout=1):  # polls so that a crashed server fails at once
        if not server.is_alive():
            error = server.errors.get(timeout=1)[1] if not server.errors.empty() else "no error reported"
            pytest.fail(f"Daphne stopped before serving: {error}", pytrace=False)
    port = server.port.value
    try:
        yield LiveServer(url=f"http://127.0.0.1:{port}", ws_url=f"ws://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.join(WAIT_SECONDS)


@pytest.fixture
def daphne_live_server(transactional_db, settings) -> Iterator[LiveServer]:
    """The lab's ASGI app (pages, API, WebSockets, static files) served by
    Daphne in a child process on a free port, against the test database
    (so tests using it see committed data: `transactional_db`)."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost", "127.0.0.1"]
    with daphne_server() as server:
        yield server
