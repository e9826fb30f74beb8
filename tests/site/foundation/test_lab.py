"""`loopguard lab --demo` as a user runs it: no services configured, a fresh
data directory, a free port; then Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from websockets.sync.client import connect

from detector.importers import parse_path
from loopguard_site.demo import DEMO_DIR
from loopguard_site.jobs import FINISHED_STATES

LOOPGUARD = Path(sys.executable).with_name("loopguard")  # the console script pip installed
SERVICE_VARIABLES = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG")


def read_until_url(lab: subprocess.Popen) -> list[str]:
    lines = []
    for line in lab.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("LoopGuard lab: http://"):
            return lines
    raise AssertionError(f"the lab exited before serving: {lines}")


def embedded_env(data_dir: Path) -> dict:
    env = {name: value for name, value in os.environ.items() if name not in SERVICE_VARIABLES}
    return {**env, "LOOPGUARD_DATA_DIR": str(data_dir)}


def demo_lab(data_dir: Path) -> subprocess.Popen:
    """`loopguard lab --demo` on a free port, embedded, on `data_dir`."""
    return subprocess.Popen(
        [LOOPGUARD, "lab", "--demo", "--port", "0"],
        env=embedded_env(data_dir), cwd=data_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def test_it_serves_the_demo_sessions_without_services_and_stops_on_ctrl_c(tmp_path):
    lab = demo_lab(tmp_path)
    try:
        lines = read_until_url(lab)
        url = lines[-1].removeprefix("LoopGuard lab: ")
        token = next(line.removeprefix("API token: ") for line in lines if line.startswith("API token: "))
        with urllib.request.urlopen(url, timeout=30) as response:
            home = (response.status, response.url)  # anonymous: sent to the login page
        listing = urllib.request.Request(url + "api/sessions", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(listing, timeout=30) as response:
            listed = [session["title"] for session in json.loads(response.read())["results"]]
        with urllib.request.urlopen(url + "static/plotly/plotly.min.js", timeout=30) as response:
            plotly_js = response.read()
        with connect(
            url.replace("http://", "ws://") + "ws/ping/", additional_headers={"Authorization": f"Bearer {token}"}
        ) as ws:
            ws.send(json.dumps({"ping": "lab"}))
            pong = json.loads(ws.recv(timeout=30))
        job_id = next(int(line.split("#")[1].split()[0]) for line in lines if line.startswith("Demo: replay job #"))
        with connect(
            url.replace("http://", "ws://") + f"ws/replays/{job_id}",
            additional_headers={"Authorization": f"Bearer {token}"},
        ) as ws:
            progress = json.loads(ws.recv(timeout=60))
            while progress["state"] not in FINISHED_STATES:  # the worker thread runs the queued job
                progress = json.loads(ws.recv(timeout=120))
        flagged = urllib.request.Request(
            url + "api/sessions?has_detections=1", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(flagged, timeout=30) as response:
            looping = sorted(session["title"] for session in json.loads(response.read())["results"])
    finally:
        lab.send_signal(signal.SIGINT)
        rest, _ = lab.communicate(timeout=60)

    titles = [parse_path(path, "events").title for path in sorted(DEMO_DIR.glob("*.jsonl"))]
    assert lines[:1] == ["Demo: 10 sessions loaded, 0 already there"]
    assert lines[2].startswith("API token: lg_") and len(token) == 46
    assert lines[3] == f"Demo: replay job #{job_id} runs them through default, seed000, gemini, preview"
    assert lines[4] == "Embedded mode: Celery worker thread (2 threads), in-memory channel layer"
    assert (progress["state"], progress["done"], progress["failed"], progress["total"]) == ("done", 40, 0, 40)
    assert looping == sorted(title for title in titles if "loop" in title.split(":")[0].lower())
    assert url.startswith("http://127.0.0.1:") and url.endswith("/")
    assert home == (200, url + "accounts/login/?next=/")
    assert sorted(listed) == sorted(titles)
    assert plotly_js == (settings.PLOTLY_JS_DIR / "plotly.min.js").read_bytes()
    assert pong == {"pong": "lab"}
    assert rest.splitlines()[-1] == "LoopGuard lab stopped"
    assert lab.returncode == 0
    assert (tmp_path / "loopguard.sqlite3").exists()

    # Restarted on the same data directory: the same demo login and token, nothing loaded twice.
    again = demo_lab(tmp_path)
    try:
        restarted = read_until_url(again)
    finally:
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=60)
    assert restarted[:3] == ["Demo: 0 sessions loaded, 10 already there", lines[1], lines[2]]


def test_it_stops_cleanly_on_sigterm(tmp_path):
    lab = subprocess.Popen(
        [LOOPGUARD, "lab", "--port", "0"],
        env=embedded_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines = read_until_url(lab)
    finally:
        lab.send_signal(signal.SIGTERM)
        rest, _ = lab.communicate(timeout=60)

    assert not any(line.startswith("API token") for line in lines)  # no --demo, no demo account
    assert rest.splitlines() == ["LoopGuard lab stopped"]
    assert lab.returncode == 0


def test_it_fails_when_the_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [LOOPGUARD, "lab", "--port", str(port)],
            env=embedded_env(tmp_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == f"LoopGuard lab: could not listen on 127.0.0.1:{port}"


@pytest.mark.parametrize("module", ["loopguard_site.cli.lab", "detector.cli"])
def test_listing_the_commands_imports_no_django(module):
    probe = f"import sys, {module}; print(sorted(m for m in ('django', 'celery', 'daphne') if m in sys.modules))"

    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)

    assert result.stdout == "[]\n", result.stderr


def test_lab_is_a_loopguard_subcommand():
    result = subprocess.run([LOOPGUARD, "lab", "--help"], capture_output=True, text=True, timeout=60)

    assert result.returncode == 0
    assert "--demo" in result.stdout and "--port" in result.stdout and "--host" in result.stdout


def test_ctrl_c_stops_it_when_started_as_a_background_job(tmp_path):
    # A non-interactive shell starts `cmd &` with SIGINT ignored; the lab
    # still stops on it (before, it served on until killed).
    lab = subprocess.Popen(
        [LOOPGUARD, "lab", "--port", "0"],
        env=embedded_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        read_until_url(lab)
        lab.send_signal(signal.SIGINT)
        rest, _ = lab.communicate(timeout=60)
    finally:
        lab.kill()

    assert rest.splitlines()[-1] == "LoopGuard lab stopped"
    assert lab.returncode == 0
