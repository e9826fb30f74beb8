"""Every page of the lab in headless Chromium: axe-core (tests/assets/axe-core,
from the npm registry; nothing loads from a CDN) finds no serious or
critical violation, and each page's screenshot is saved under its test's
tmp dir. One lab (data, Daphne, Chromium) serves the whole module."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from selenium.webdriver.common.action_chains import ActionChains

from loopguard_site.accounts.models import Role
from loopguard_site.accounts.services import default_project
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.services import profiles_import, tuning_job_execute
from loopguard_site.replay.services import replay_job_create, replay_job_session_execute
from loopguard_site.review.services import label_detection_set
from loopguard_site.transcripts.services import session_create_live
from tests.browser import WAIT_SECONDS, LiveServer, daphne_server, login, new_chromium_driver, wait_for
from tests.conftest import unconsumed_queue_named
from tests.members import member
from tests.site.profiles.conftest import LOOSE_TOML, labelled_sessions
from tests.site.replay.conftest import store_demo

AXE = (Path(__file__).resolve().parents[2] / "assets" / "axe-core" / "axe.min.js").read_text()
RUN_AXE = """const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]}).then(function (results) {
  done(results.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))})));
}).catch(error => done([{id: "axe-error", help: String(error)}]));"""
TOOLS = "loop-tools-readmediafile.jsonl"
REASONING = "loop-reasoning-two-exits-riddle.jsonl"


@dataclass
class Lab:
    server: LiveServer
    driver: object
    paths: dict[str, str]
    cookie: dict  # the login session's


def world() -> tuple[object, dict[str, str]]:
    """A reviewer's lab with something on every page; the page paths."""
    from django.contrib.auth import get_user_model

    user = member(get_user_model().objects.create_user("ada"), Role.ADMIN)
    tools, reasoning = store_demo(TOOLS), store_demo(REASONING)
    job = replay_job_create(user=user, profiles=["default", "gemini"], session_ids=[tools.pk, reasoning.pk])
    for session in (tools, reasoning):
        replay_job_session_execute(job_id=job.pk, session_id=session.pk, claim="accessibility")
    label_detection_set(detection=tools.detections.first(), reviewer=user, label="true_loop")
    live = session_create_live(model="gpt-4o", title="live agent", uploader=user)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=user)
    labelled_sessions(user)
    tuning = TuningJob.objects.create(project=default_project(), model_glob="*", base_profile="loose", created_by=user)
    tuning_job_execute(job_id=tuning.pk)
    paths = {
        "overview": "/",
        "sessions": "/sessions/",
        "session": f"/sessions/{tools.pk}/",
        "upload": "/upload/",
        "live": "/live/",
        "live-session": f"/live/{live.pk}",
        "review": "/review/",
        "agreement": "/review/agreement",
        "replays": "/replays/",
        "replay-job": f"/replays/{job.pk}",
        "replay-new": "/replays/new",
        "compare": f"/replays/compare?a=default&b=gemini&sessions={tools.pk},{reasoning.pk}",
        "profiles": "/profiles/",
        "profile": "/profiles/loose/",
        "tuning-new": "/profiles/tune",
        "tuning-job": f"/profiles/tuning/{tuning.pk}",
        "projects": "/accounts/projects/",
        "tokens": "/accounts/tokens/",
        "login": "/accounts/login/",
        "404": "/no/such/page/",
    }
    return user, paths


@pytest.fixture(scope="module")
def lab(django_db_setup, django_db_blocker) -> Iterator[Lab]:
    from loopguard_site.celery import app as celery_app

    default_queue = celery_app.conf.task_default_queue
    with django_db_blocker.unblock(), unconsumed_queue_named() as queue:
        celery_app.conf.task_default_queue = queue  # the world's jobs run here, by hand: no worker takes them
        try:
            user, paths = world()
            with daphne_server() as server, tempfile.TemporaryDirectory(prefix="loopguard-chromium-") as profile:
                driver = new_chromium_driver(profile)
                try:
                    login(driver, server.url, user)
                    yield Lab(server, driver, paths, driver.get_cookie(settings.SESSION_COOKIE_NAME))
                finally:
                    driver.quit()
        finally:
            celery_app.conf.task_default_queue = default_queue
            call_command("flush", interactive=False, verbosity=0)  # the module's rows, committed
            default_project()  # as the migrations left it: later tests expect it


def settled(driver) -> None:
    """Wait for the page to load and, where it draws Plotly charts, for them to be drawn."""
    deadline = time.monotonic() + WAIT_SECONDS
    while driver.execute_script("return document.readyState") != "complete":
        assert time.monotonic() < deadline, "the page never finished loading"
        time.sleep(0.1)
    if driver.find_elements("css selector", "[data-plot], #timeline-plot, #live-timeline"):
        time.sleep(1.5)  # Plotly draws after load
    else:
        time.sleep(0.3)


def screenshot(driver, path: Path) -> None:
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(max(height, 900), 4000))
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 900)


PAGES = [
    "overview", "sessions", "session", "upload", "live", "live-session", "review", "agreement", "replays",
    "replay-job", "replay-new", "compare", "profiles", "profile", "tuning-new", "tuning-job", "projects", "tokens",
    "login", "404",
]  # fmt: skip


@pytest.mark.django_db  # the test database exists for the module's lab; the tests themselves write nothing
@pytest.mark.parametrize("page", PAGES)
def test_the_page_has_no_serious_accessibility_violation(lab, page, tmp_path):
    driver = lab.driver
    if page == "login":
        driver.delete_all_cookies()  # as a visitor sees it
    try:
        driver.get(lab.server.url + lab.paths[page])
        settled(driver)
        screenshot(driver, tmp_path / f"{page}.png")
        driver.execute_script(AXE)
        violations = driver.execute_async_script(RUN_AXE)
    finally:
        if page == "login":
            driver.add_cookie(lab.cookie)
    assert violations == [], "\n".join(
        f"{v['id']} ({v.get('impact')}): {v['help']} at {v.get('nodes')}" for v in violations
    )
    assert (tmp_path / f"{page}.png").stat().st_size > 10_000


@pytest.mark.django_db
def test_a_click_on_an_overview_bar_opens_the_session_list_filtered_to_it(lab):
    driver = lab.driver
    driver.get(lab.server.url + "/")
    wait_for(driver, "#chart-models.chart-ready")
    bars = driver.find_elements("css selector", "#chart-models .barlayer .trace:first-child .point path")
    expected = driver.execute_script("return document.getElementById('chart-models').data[0].customdata[0];")
    ActionChains(driver).move_to_element(bars[0]).click().perform()  # Plotly's drag layer takes the click
    deadline = time.monotonic() + WAIT_SECONDS
    while not driver.current_url.endswith(expected) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert driver.current_url == lab.server.url + expected
    assert expected.startswith("/sessions/?model=")
