"""The upload page in real headless Chromium against Daphne: files chosen in
the file input and files dropped on the drop zone import, each with its own
outcome line; the imported line links to the session."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from loopguard_site.celery import app as celery_app
from loopguard_site.transcripts.models import Session
from tests.browser import login, wait_for
from tests.members import member
from tests.shared_paths import FORMATS_DIR, REPO_ROOT

OPENAI = FORMATS_DIR / "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt"
TRUNCATED = b'{"type": "turn"}\n{"type": "content", "text": "abc'


@pytest.fixture(autouse=True)
def scans_wait(monkeypatch, unconsumed_queue) -> None:
    """No worker runs here: an import's scan waits in a queue of its own
    (the tests that need it run it themselves)."""
    monkeypatch.setitem(celery_app.conf, "task_default_queue", unconsumed_queue)


def outcome_lines(driver) -> list[list[str]]:
    """Each outcome row's cells but the verdict (which a scan fills in)."""
    wait_for(driver, "#outcomes")
    rows = driver.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")
    return [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td:not(.scan-verdict)")] for row in rows]


def test_two_files_from_the_file_input_one_good_one_bad(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    user = member(django_user_model.objects.create_user("uploader"))
    good = tmp_path / "good.chunks.txt"
    good.write_bytes(OPENAI.read_bytes())
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(TRUNCATED)
    driver = chromium_driver
    login(driver, daphne_live_server.url, user)

    driver.get(daphne_live_server.url + "/upload/")
    driver.find_element(By.ID, "file-input").send_keys(f"{good}\n{bad}")
    chosen = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#chosen li")]
    driver.find_element(By.ID, "tags").send_keys("browser, e2e")
    driver.find_element(By.ID, "import").click()
    lines = outcome_lines(driver)

    session = Session.objects.get()
    assert chosen == [f"good.chunks.txt ({good.stat().st_size} bytes)", f"bad.jsonl ({len(TRUNCATED)} bytes)"]
    assert lines == [
        ["good.chunks.txt", f"#{session.pk} good.chunks", "21", "openai", "default"],
        ["bad.jsonl", "error bad.jsonl: line 2: truncated JSON: Unterminated string starting at (column 29)"],
    ]
    assert (session.uploader, session.tag_names(), session.model) == (user, ["browser", "e2e"], "deepseek-v4-flash")
    driver.find_element(By.LINK_TEXT, f"#{session.pk} good.chunks").click()
    assert wait_for(driver, "h1.session-title").text == "good.chunks"  # the session page
    assert driver.current_url == f"{daphne_live_server.url}/sessions/{session.pk}/"


def test_files_dropped_on_the_drop_zone_are_uploaded(chromium_driver, daphne_live_server, django_user_model):
    user = member(django_user_model.objects.create_user("dropper"))
    driver = chromium_driver
    login(driver, daphne_live_server.url, user)
    driver.get(daphne_live_server.url + "/upload/")

    driver.execute_script(
        """
        const transfer = new DataTransfer();
        const events = '{"type": "turn"}\\n{"type": "content", "text": "<b>hi</b>"}\\n';
        transfer.items.add(new File([events], "<img src=x onerror=alert(1)>.jsonl"));
        transfer.items.add(new File(["\\u0000binary"], "blob.bin"));
        const drop = new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true});
        document.getElementById("dropzone").dispatchEvent(drop);
        """
    )
    chosen = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#chosen li")]
    driver.find_element(By.ID, "import").click()
    lines = outcome_lines(driver)

    session = Session.objects.get()
    assert chosen == ["<img src=x onerror=alert(1)>.jsonl (58 bytes)", "blob.bin (7 bytes)"]
    assert lines == [
        ["<img src=x onerror=alert(1)>.jsonl", f"#{session.pk} <img src=x onerror=alert(1)>", "3", "events", "default"],
        ["blob.bin", "error blob.bin: line 1: binary file (NUL byte), not a text transcript"],
    ]
    assert driver.find_elements(By.CSS_SELECTOR, "img") == []  # the name was escaped, never rendered
    assert session.title == "<img src=x onerror=alert(1)>"


def test_the_upload_result_shows_the_verdict_once_the_scan_stored_it(
    chromium_driver, daphne_live_server, django_user_model, tmp_path
):
    from loopguard_site.replay.models import ReplayJob
    from loopguard_site.replay.services import queued_runs_execute_here

    user = member(django_user_model.objects.create_user("scanner"))
    looping = tmp_path / "looping.jsonl"
    looping.write_bytes((REPO_ROOT / "fixtures/demo/loop-tools-readmediafile.jsonl").read_bytes())
    driver = chromium_driver
    login(driver, daphne_live_server.url, user)
    driver.get(daphne_live_server.url + "/upload/")
    driver.find_element(By.ID, "file-input").send_keys(str(looping))
    driver.find_element(By.ID, "import").click()
    cell = wait_for(driver, "#outcomes .scan-verdict")
    assert cell.text == "scanning…"  # no worker has run the scan yet

    session = Session.objects.get()
    job = ReplayJob.objects.get()
    assert (job.profiles, list(job.runs.values_list("session_id", flat=True))) == (["default"], [session.pk])
    queued_runs_execute_here(session_ids=[session.pk])  # what a worker does with the job's task
    badge = wait_for(driver, "#outcomes .scan-verdict a.badge-loop")

    first = session.verdicts.get(profile="default")
    assert badge.text == f"loop · {first.first_detection_type} · tools @{first.first_detection_start}"
    at_first = f"/sessions/{session.pk}/?profile=default#detection-{first.first_detection_id}"
    assert badge.get_attribute("href").endswith(at_first)
    replay = driver.find_element(By.LINK_TEXT, "Replay through other profiles…")
    assert replay.get_attribute("href").endswith(f"/replays/new?session={session.pk}")


def test_the_session_list_shows_a_verdict_once_the_scan_stored_it(
    chromium_driver, daphne_live_server, django_user_model
):
    from django.urls import reverse

    from loopguard_site.replay.services import queued_runs_execute_here, sessions_scan
    from loopguard_site.transcripts.services import session_import_file

    user = member(django_user_model.objects.create_user("lister"))
    raw = (REPO_ROOT / "fixtures/demo/loop-tools-readmediafile.jsonl").read_bytes()
    session = session_import_file(data=raw, filename="tools.jsonl")
    sessions_scan(sessions=[session], user=user)  # queued: no worker has run it yet
    driver = chromium_driver
    login(driver, daphne_live_server.url, user)
    driver.get(daphne_live_server.url + reverse("timeline:session_list"))
    state = wait_for(driver, f'tr[data-session="{session.pk}"] .scan-state')
    assert state.text == "scanning"

    queued_runs_execute_here(session_ids=[session.pk])  # what a worker does with the task
    row = f'tr[data-session="{session.pk}"]:not([data-pending])'
    assert wait_for(driver, f"{row} .scan-state").text == "scanned-loop"
    verdict = session.verdicts.get()
    badge = driver.find_element(By.CSS_SELECTOR, f"{row} .verdicts a.badge-loop")
    assert badge.text == f"default: loop · {verdict.first_detection_type} · tools @0"
