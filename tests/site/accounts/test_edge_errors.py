"""Errors answered at the edge: a NUL or an unpaired surrogate in a query,
form or JSON field is a 400 naming the field; Redis unreachable during an
API call is not a 500 (the quota fails open; a channel layer send answers
503 with Retry-After); the database connection dropped in the middle of an
import's COPY answers 503; with DEBUG off a 500 is logged with its traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from django.db import connection
from django.test import Client, override_settings

from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_live
from tests.conftest import REPO_ROOT, database_url
from tests.members import member, project_token


@pytest.fixture
def user(django_user_model):
    return member(django_user_model.objects.create_user("edge"))


@pytest.fixture
def api(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {project_token(user=user)[1]}", raise_request_exception=False)


def answer(response) -> tuple[int, str | None, str]:
    body = json.loads(response.content)
    return response.status_code, body["field"], body["error"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "field", "what"),
    [
        ("/api/sessions?q=a%00b", "q", "a NUL character (\\u0000)"),
        ("/api/sessions?q=ok&tag=x&tag=y%00", "tag", "a NUL character (\\u0000)"),
        ("/api/sessions?a%00=1", "a\x00", "a key with a NUL character (\\u0000)"),
        ("/?q=a%00b", "q", "a NUL character (\\u0000)"),
    ],
)
def test_a_nul_in_a_query_field_is_a_400_naming_it(api, user, path, field, what):
    api.force_login(user)
    assert answer(api.get(path)) == (400, field, f"{field} holds {what}")


@pytest.mark.django_db
def test_a_nul_in_a_form_field_is_a_400_naming_it():
    response = Client().post("/accounts/login/", {"username": "a\x00", "password": "x"})
    assert answer(response) == (400, "username", "username holds a NUL character (\\u0000)")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("note", "what"),
    [('"a\\u0000b"', "a NUL character (\\u0000)"), ('"a\\ud800b"', "an unpaired surrogate (\\ud800-\\udfff)")],
)
def test_a_nul_or_a_lone_surrogate_in_a_json_field_is_a_400_naming_it(api, user, note, what):
    session = session_create_live(model="m", uploader=user)
    body = '{"label": "false_positive", "note": ' + note + "}"
    response = api.post(f"/api/sessions/{session.pk}/labels", body, content_type="application/json")
    assert answer(response) == (400, "note", f"note holds {what}")


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.django_db
def test_the_quota_fails_open_while_redis_is_unreachable(api, caplog):
    dead = f"redis://127.0.0.1:{unused_port()}/0"
    with override_settings(
        CACHES={"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": dead}}
    ):
        response = api.get("/api/sessions")
    assert response.status_code == 200
    assert "the quota counter is unreachable, 1 calls allowed uncounted" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_live_ingest_while_the_channel_layer_is_unreachable_is_a_503_and_stored_once(live_services, api, user):
    session = session_create_live(model="m", uploader=user)
    dead = f"redis://127.0.0.1:{unused_port()}/0"
    layer = {
        "default": {"BACKEND": "loopguard_site.channel_layers.PipelinedPubSubChannelLayer", "CONFIG": {"hosts": [dead]}}
    }
    message = json.dumps({"seq": 1, "event": {"type": "content", "text": "hi"}})
    url = f"/api/sessions/{session.pk}/events"
    with override_settings(CHANNEL_LAYERS=layer):
        failed = api.post(url, message, content_type="application/json")
    again = api.post(url, message, content_type="application/json")

    assert (failed.status_code, failed["Retry-After"]) == (503, "1")
    assert json.loads(failed.content)["error"] == "Redis (the broker and channel layer) is unavailable; try again"
    assert (again.status_code, json.loads(again.content)["ack"]) == (200, 1)
    assert Event.objects.filter(session=session).count() == 1


def terminate_the_copy(url: str, locked: threading.Event, done: threading.Event) -> None:
    """Hold the events table locked (then set `locked`), wait for a COPY into
    it to queue behind the lock, and terminate that backend: the connection
    drops mid-COPY."""
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as killer:
        holder.execute("LOCK TABLE transcripts_event IN EXCLUSIVE MODE")
        locked.set()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            row = killer.execute(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY %%' AND wait_event_type = 'Lock'"
            ).fetchone()
            if row:
                killer.execute("SELECT pg_terminate_backend(%s)", row)
                break
            time.sleep(0.02)
        holder.rollback()
    done.set()


@pytest.mark.django_db(transaction=True)
def test_the_database_dropped_during_an_imports_copy_is_a_503_and_nothing_is_stored(live_services, api):
    locked, done = threading.Event(), threading.Event()
    threading.Thread(target=terminate_the_copy, args=(database_url(connection.settings_dict), locked, done)).start()
    body = "".join(json.dumps({"type": "content", "text": f"{n} "}) + "\n" for n in range(50)).encode()
    assert locked.wait(60)  # else the import may finish before the lock is taken

    response = api.post("/api/sessions?format=events", body, content_type="application/x-ndjson")

    assert done.wait(120)
    assert (response.status_code, response["Retry-After"]) == (503, "1")
    assert answer(response) == (503, None, "the database is unavailable; try again")
    assert not Session.objects.exists()


def test_with_debug_off_a_500_is_logged_with_its_traceback(tmp_path):
    script = (
        "import django, logging\n"
        "django.setup()\n"
        "try:\n"
        "    raise RuntimeError('boom in a view')\n"
        "except RuntimeError:\n"
        "    logging.getLogger('django.request').error('Internal Server Error: /x', exc_info=True)\n"
    )
    env = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": "x" * 50,
        "LOOPGUARD_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "loopguard_site.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert "ERROR django.request: Internal Server Error: /x" in done.stderr, done.stderr
    assert "Traceback (most recent call last)" in done.stderr and "RuntimeError: boom in a view" in done.stderr
