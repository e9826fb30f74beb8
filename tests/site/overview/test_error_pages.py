"""Production error pages (DEBUG off): 404, 403 and 500 in the lab's own
style (its stylesheet and top bar), with a way back."""

from __future__ import annotations

import pytest
from django.test import Client

from loopguard_site.accounts.models import Role
from loopguard_site.transcripts.services import session_create_from_events
from tests.members import member


@pytest.fixture(autouse=True)
def production(settings):
    settings.DEBUG = False


@pytest.fixture
def reviewer(django_user_model):
    return member(django_user_model.objects.create_user("rita"), Role.REVIEWER)


@pytest.fixture
def browser(reviewer) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(reviewer)
    return client


def assert_lab_style(page: str) -> None:
    assert '<link rel="stylesheet" href="/static/css/loopguard.css">' in page
    assert '<a class="brand" href="/">' in page
    assert '<a class="btn btn-primary" href="/">Go to the overview</a>' in page
    assert "Traceback" not in page and "DEBUG" not in page


@pytest.mark.django_db
def test_an_unknown_page_gets_the_labs_404(browser):
    answer = browser.get("/no/such/page")
    page = answer.content.decode()
    assert answer.status_code == 404
    assert "<h1>Page not found</h1>" in page and "<code>/no/such/page</code>" in page
    assert_lab_style(page)
    assert '<nav class="site-nav" aria-label="Main">' in page  # signed in: the whole bar


@pytest.mark.django_db
def test_an_unknown_session_says_what_was_not_found(browser):
    page = browser.get("/sessions/987654/").content.decode()
    assert "There is nothing at <code>/sessions/987654/</code>: no session with id 987654." in page


@pytest.mark.django_db
def test_a_role_too_low_gets_the_labs_403_naming_the_role(browser):
    session = session_create_from_events(title="t", model="m", source_format="events", parser_version="1", events=[])
    answer = browser.post("/review/adjudicate", {"session": session.pk, "item": "session", "label": "clean"})
    page = answer.content.decode()
    assert answer.status_code == 403
    assert "<h1>Not allowed</h1>" in page
    assert "This needs the admin role in the session&#x27;s project; you are a reviewer." in page
    assert_lab_style(page)


@pytest.mark.django_db
def test_a_server_error_gets_the_labs_500(browser, monkeypatch):
    from loopguard_site.overview import selectors

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "session_totals", broken)
    answer = browser.get("/")
    page = answer.content.decode()
    assert answer.status_code == 500
    assert "<h1>Something went wrong on our side</h1>" in page and "boom" not in page
    assert_lab_style(page)
