"""Time until the session page of a 1 MB session is interactive in headless Chromium.

A session of about 1 MB of real text (the corpus's normal reasoning rows on
`reasoning`, then normal and loop content rows on `content`, in 16-character
deltas, one turn per row) is stored in a dedicated database
(`loopguard_bench_ui`, created and dropped here) and replayed through the
`default` profile, so the page has its detections. Daphne serves the lab (a
subprocess, Redis db 10); headless Chromium (tests/browser.py's driver
options) opens `/sessions/<id>/` signed in. A script injected before the
page's own (`Page.addScriptToEvaluateOnNewDocument`) polls every animation
frame and records `performance.now()` (milliseconds from navigation start)
when the Plotly plot has rendered (`.js-plotly-plot .main-svg`) and the text
windows are present (`.text-window`). Reported per run beside
DOMContentLoaded and the load event; then the median.

    .venv/bin/python bench/ui_interactive.py            # 5 runs
    .venv/bin/python bench/ui_interactive.py --quick    # 3 runs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import add_corpus_argument, corpus_files  # noqa: E402
from bench.lab_processes import HOST, bench_lab, load_average, processes, start_daphne  # noqa: E402
from detector.evaluation import read_corpus  # noqa: E402

DATABASE = "loopguard_bench_ui"
REDIS_DB = 10
TEXT_CHARS = 1_000_000
DELTA_CHARS = 16
PAGE_TIMEOUT_S = 120
INTERACTIVE_MARKER = """
(function () {
  function check() {
    if (document.querySelector('.js-plotly-plot .main-svg') && document.querySelector('.text-window')) {
      window.__lgInteractiveMs = performance.now();
    } else {
      requestAnimationFrame(check);
    }
  }
  requestAnimationFrame(check);
})();
"""


def session_events(limit: int, corpus: list[Path] | None = None) -> list[dict]:
    """Corpus rows as one session: reasoning rows first, then content rows, until `limit` characters."""
    rows = [row for path in corpus_files(corpus) for row in read_corpus(path)]
    reasoning = [r for r in rows if r.channel == "reasoning" and r.label == "normal"]
    content = [r for r in rows if r.channel == "content"]
    events: list[dict] = [{"type": "session", "model": "bench"}]
    budget = {"reasoning": limit // 2, "content": limit - limit // 2}
    for row in reasoning + content:
        channel = row.channel
        text = row.text[: budget[channel]]
        if not text:
            continue
        budget[channel] -= len(text)
        events.append({"type": "turn"})
        events += [{"type": channel, "text": text[i : i + DELTA_CHARS]} for i in range(0, len(text), DELTA_CHARS)]
        events.append({"type": "finish", "reason": "stop"})
    return events


def bench_session(corpus: list[Path] | None = None) -> tuple[object, int, int, int]:
    from django.contrib.auth import get_user_model

    from loopguard_site.replay.models import Detection
    from loopguard_site.replay.services import replay_session
    from loopguard_site.transcripts.services import session_create_from_events

    user = get_user_model().objects.create_user(username="bench-ui", password=None)
    events = session_events(TEXT_CHARS, corpus)
    session = session_create_from_events(
        title="bench 1 MB", model="bench", source_format="events", parser_version="bench", events=events, uploader=user
    )
    replay_session(session=session, profile_name="default")
    chars = sum(len(e.get("text", "")) for e in events)
    return user, session.pk, chars, Detection.objects.filter(session=session).count()


def session_cookie(user) -> tuple[str, str]:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value


def timed_load(driver, url: str) -> dict:
    start = time.perf_counter()
    driver.get(url)  # returns after the load event
    deadline = time.perf_counter() + PAGE_TIMEOUT_S
    while (ready := driver.execute_script("return window.__lgInteractiveMs || null")) is None:
        if time.perf_counter() > deadline:
            raise SystemExit(f"{url}: no plot and text windows within {PAGE_TIMEOUT_S} s")
        time.sleep(0.05)
    timing = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return [n.domContentLoadedEventEnd, n.loadEventEnd, n.responseEnd, n.decodedBodySize];"
    )
    # the lab serves no favicon: Chromium's one request for it is not the page's error
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "/favicon.ico" not in e["message"]]
    return {
        "interactive": ready,
        "dcl": timing[0],
        "response": timing[2],
        "load": timing[1],
        "html_kb": timing[3] / 1000,
        "wall": time.perf_counter() - start,
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 5")
    add_corpus_argument(parser)
    args = parser.parse_args(argv)
    runs = 3 if args.quick else 5
    logs = Path(tempfile.mkdtemp(prefix="loopguard-bench-ui-"))
    with bench_lab(DATABASE, REDIS_DB) as env, processes() as servers:
        from tests.browser import new_chromium_driver

        user, session_id, chars, detections = bench_session(args.corpus)
        _, port = start_daphne(servers, env, logs / "daphne.log")
        base = f"http://{HOST}:{port}"
        name, value = session_cookie(user)
        with tempfile.TemporaryDirectory(prefix="loopguard-chromium-") as profile_dir:
            driver = new_chromium_driver(profile_dir)
            try:
                driver.set_page_load_timeout(PAGE_TIMEOUT_S)
                driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INTERACTIVE_MARKER})
                driver.get(base + "/static/css/loopguard.css")  # a page of the host, to own its cookies
                driver.add_cookie({"name": name, "value": value, "path": "/"})
                print(
                    f"session {session_id}: {chars:,} characters of text, {detections:,} detections; {load_average()}"
                )
                print(
                    "| run | interactive ms | HTML received ms | DOMContentLoaded ms | load ms | HTML KB"
                    " | script errors | load average |"
                )
                print("|---|---|---|---|---|---|---|---|")
                results = []
                for number in range(1, runs + 1):
                    result = timed_load(driver, f"{base}/sessions/{session_id}/")
                    results.append(result)
                    print(
                        f"| {number} | {result['interactive']:,.0f} | {result['response']:,.0f} | {result['dcl']:,.0f}"
                        f" | {result['load']:,.0f}"
                        f" | {result['html_kb']:,.0f} | {len(result['errors'])} | {load_average()[13:]} |",
                        flush=True,
                    )
            finally:
                driver.quit()
        for number, result in enumerate(results, start=1):
            for error in result["errors"]:
                print(f"run {number} script error: {error['message']!r}")
        median = statistics.median(r["interactive"] for r in results)
        print(f"\nmedian time to interactive: {median:,.0f} ms over {runs} runs (run 1 with a cold cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
