"""Transcript text is untrusted: a transcript whose text, tool names, tool
arguments, tool output, model name and title are script payloads is uploaded
through the API and streamed live, and no page runs any of it in a real
headless Chromium — not the overview, the session list, the session page (Plotly hover
text included), the live pages or the review queue.

Each payload, if it ran, would set `window.__xss` (and some the title to
"PWNED", spelt in two halves so the escaped text shown in the title has not
the word).
Two walls are checked apart: the DOM holds no element a payload would have
made (escaping), and nothing ran (escaping and the Content-Security-Policy)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from loopguard_site.celery import app as celery_app
from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Session
from tests.browser import login, wait_for
from tests.members import member, project_token

PAYLOADS = (
    "<script>window.__xss=1;document.title='PW'+'NED';alert(1)</script>",
    "<img src=x onerror=\"window.__xss=2;document.title='PW'+'NED';alert(2)\">",
    '<a href="javascript:window.__xss=3;alert(3)">click</a>',
    '"><svg onload="window.__xss=4;alert(4)"></svg>',
    "'-alert(5)-'</b><iframe src=\"javascript:parent.__xss=5\"></iframe>",
)
PAYLOAD = " ".join(PAYLOADS)

# Elements a payload would have made, had it reached the DOM unescaped.
# (json_script blocks are `type="application/json"`: data, not code.)
INJECTED = """return [...document.querySelectorAll(
    'script:not([src]):not([type="application/json"]), img[src="x"], svg[onload], [onerror], [onload],'
    + ' a[href^="javascript:"], iframe')].map(e => e.outerHTML.slice(0, 120));"""
RAN = "return [window.__xss === undefined ? null : window.__xss, document.title];"
# Hover every point Plotly drew, so its hover labels are built from the payloads.
HOVER_ALL = """const plot = document.querySelector('.js-plotly-plot');
if (!plot || !plot.data) return 0;
let hovered = 0;
plot.data.forEach((trace, curve) => {
  const n = (trace.x || []).length;
  for (let point = 0; point < n; point++) {
    Plotly.Fx.hover(plot, [{curveNumber: curve, pointNumber: point}]);
    hovered++;
  }
});
return hovered;"""


def transcript_lines() -> str:
    events = [
        {"type": "session", "model": PAYLOAD, "meta": {"title": PAYLOAD}},
        {"type": "turn", "prompt": PAYLOAD},
        {"type": "user", "text": PAYLOAD},
        *({"type": "reasoning", "text": PAYLOAD + "\n"} for _ in range(30)),
        *({"type": "content", "text": PAYLOAD + "\n"} for _ in range(30)),
    ]
    for n in range(8):
        args = {"cmd": PAYLOAD, PAYLOADS[0]: PAYLOADS[2]}
        events.append({"type": "tool_call", "name": f"run{PAYLOADS[1]}", "args": args, "id": f"c{n}"})
        events.append({"type": "tool_result", "id": f"c{n}", "ok": False, "output": PAYLOAD})
    events.append({"type": "finish", "reason": PAYLOAD})
    return "\n".join(json.dumps(event) for event in events) + "\n"


def api_post(server, token: str, path: str, body: bytes) -> dict:
    request = urllib.request.Request(
        server.url + path, data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def assert_nothing_ran(driver, path: str) -> None:
    assert driver.execute_script(INJECTED) == [], path
    xss, title = driver.execute_script(RAN)
    assert xss is None and "PWNED" not in title and title.endswith("LoopGuard lab"), (path, xss, title)
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 - reading it is what raises


@pytest.fixture
def scans_wait(monkeypatch, unconsumed_queue) -> None:
    """No worker runs here (the test replays the import itself): the
    import's scan waits in a queue of its own. Set before the live server
    starts, which sends with the queue it finds."""
    monkeypatch.setitem(celery_app.conf, "task_default_queue", unconsumed_queue)


@pytest.mark.django_db(transaction=True)
def test_no_payload_runs_on_any_page(scans_wait, chromium_driver, daphne_live_server, django_user_model):
    driver, server = chromium_driver, daphne_live_server
    user = member(django_user_model.objects.create_user("viewer", is_staff=True))
    _, token = project_token(user=user, name="xss")
    query = urllib.parse.urlencode({"format": "events", "title": PAYLOAD})
    (stored,) = api_post(server, token, f"/api/sessions?{query}", transcript_lines().encode())["sessions"]
    replay_session(session=Session.objects.get(pk=stored["id"]), profile_name="default")
    live_query = urllib.parse.urlencode({"live": "1", "model": PAYLOAD, "title": PAYLOAD})
    (live,) = api_post(server, token, f"/api/sessions?{live_query}", b"")["sessions"]
    live_events = [json.loads(line) for line in transcript_lines().splitlines()[1:]]
    batch = json.dumps({"seq": 1, "events": live_events}).encode()
    api_post(server, token, f"/api/sessions/{live['id']}/events", batch)
    assert Session.objects.get(pk=stored["id"]).detections.exists()

    login(driver, server.url, user)
    driver.get(server.url + "/sessions/")
    assert PAYLOADS[0] in driver.find_element(By.TAG_NAME, "main").text  # shown, as text
    assert_nothing_ran(driver, "/sessions/")
    driver.get(server.url + "/")  # the overview: the model's name in its charts' ticks and hovers
    wait_for(driver, "#chart-models.chart-ready")
    assert driver.execute_script(HOVER_ALL) > 0
    assert PAYLOADS[0] in driver.execute_script("return document.querySelector('main').textContent")  # as text
    assert_nothing_ran(driver, "/")
    for path in (f"/sessions/{stored['id']}/", f"/live/{live['id']}"):
        driver.get(server.url + path)
        wait_for(driver, ".js-plotly-plot .scatterlayer .trace")
        assert driver.execute_script(HOVER_ALL) > 0, path
        assert PAYLOADS[1] in driver.find_element(By.TAG_NAME, "body").text, path
        assert_nothing_ran(driver, path)
    for path in ("/live/", "/review/", "/review/agreement"):
        driver.get(server.url + path)
        wait_for(driver, "main")
        assert_nothing_ran(driver, path)
