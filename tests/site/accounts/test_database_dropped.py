"""The PostgreSQL connection dropped under a request (its server process
terminated with pg_terminate_backend from another connection): that request
fails cleanly with a 503 JSON error, and the next one succeeds."""

from __future__ import annotations

import json

import psycopg
import pytest
from django.db import connection
from django.test import Client

from tests.conftest import database_url
from tests.members import member, project_token


def terminate_backend_of_this_process() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as other:
        (terminated,) = other.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
    assert terminated is True


@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_fails_one_api_request_with_503_and_the_next_succeeds(live_services, django_user_model):
    _, token = project_token(user=member(django_user_model.objects.create_user("alice")), name="t")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    assert api.get("/api/sessions").status_code == 200

    terminate_backend_of_this_process()
    failed = api.get("/api/sessions")
    recovered = api.get("/api/sessions")

    assert (failed.status_code, failed["Retry-After"]) == (503, "1")
    assert json.loads(failed.content) == {
        "error": "the database is unavailable; try again",
        "field": None,
        "line": None,
    }
    assert (recovered.status_code, json.loads(recovered.content)["results"]) == (200, [])


@pytest.mark.django_db(transaction=True)
def test_a_dropped_connection_fails_one_page_with_503_and_the_next_succeeds(live_services, django_user_model):
    browser = Client(raise_request_exception=False)
    browser.force_login(member(django_user_model.objects.create_user("alice")))

    terminate_backend_of_this_process()
    failed = browser.get("/sessions/")
    recovered = browser.get("/sessions/")

    assert failed.status_code == 503
    assert recovered.status_code == 200
