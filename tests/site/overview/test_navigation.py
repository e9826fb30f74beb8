"""The top bar: a test walks it. Every link answers 200 and is marked
current on its own page; the account menu holds projects, API tokens,
admin (superusers only) and log out; pages inside a section mark it."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from loopguard_site.accounts.models import Role
from loopguard_site.replay.services import replay_job_create
from loopguard_site.transcripts.services import session_create_from_events
from tests.members import member

BAR = ["Overview", "Sessions", "Live", "Review", "Replays", "Profiles", "Upload"]


class Links(HTMLParser):
    """The links of the main nav and of the account menu, with aria-current."""

    def __init__(self):
        super().__init__()
        self.nav: list[tuple[str, str, str | None]] = []
        self.account: list[tuple[str, str, str | None]] = []
        self.account_current: str | None = None
        self._where: str | None = None
        self._link: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "nav" and attrs.get("aria-label") == "Main":
            self._where = "nav"
        elif tag == "div" and attrs.get("class") == "account-menu-items":
            self._where = "account"
        elif tag == "summary" and self._where is None:
            self.account_current = attrs.get("aria-current")
        elif tag == "a" and self._where:
            self._link = {"href": attrs["href"], "current": attrs.get("aria-current"), "text": ""}
        elif tag == "button" and self._where == "account":
            self._link = {"href": None, "current": None, "text": ""}

    def handle_data(self, data):
        if self._link is not None:
            self._link["text"] += data

    def handle_endtag(self, tag):
        if tag in ("a", "button") and self._link is not None:
            getattr(self, self._where).append((self._link["text"].strip(), self._link["href"], self._link["current"]))
            self._link = None
        elif (tag == "nav" and self._where == "nav") or (tag == "div" and self._where == "account"):
            self._where = None


def links(page: bytes) -> Links:
    parser = Links()
    parser.feed(page.decode())
    return parser


@pytest.fixture
def browser(django_user_model) -> Client:
    client = Client()
    client.force_login(member(django_user_model.objects.create_user("alice"), Role.ADMIN))
    return client


@pytest.mark.django_db
def test_every_link_of_the_bar_answers_and_is_marked_current_on_its_page(browser):
    bar = links(browser.get("/").content).nav
    assert [text for text, _, _ in bar] == BAR
    for text, href, _ in bar:
        answer = browser.get(href)
        assert answer.status_code == 200, href
        marked = [name for name, _, current in links(answer.content).nav if current == "page"]
        assert marked == [text], href


@pytest.mark.django_db
def test_the_account_menu_reaches_projects_tokens_the_api_reference_and_log_out(browser):
    account = links(browser.get("/").content).account
    assert account == [
        ("Projects", "/accounts/projects/", None),
        ("API tokens", "/accounts/tokens/", None),
        ("API reference", "/api-reference/", None),
        ("Log out", None, None),
    ]
    for name, href, _ in account[:3]:
        page = links(browser.get(href).content)
        assert page.account_current == "page" and [n for n, _, c in page.account if c == "page"] == [name]
        assert [n for n, _, c in page.nav if c] == []


@pytest.mark.django_db
def test_admin_is_in_the_menu_for_superusers_only(django_user_model):
    root = Client()
    root.force_login(django_user_model.objects.create_superuser("root"))
    assert ("Admin", "/admin/", None) in links(root.get("/").content).account
    staff = Client()
    staff.force_login(member(django_user_model.objects.create_user("staff", is_staff=True)))
    assert "Admin" not in [name for name, _, _ in links(staff.get("/").content).account]


@pytest.mark.django_db
def test_pages_inside_a_section_mark_it(browser, django_user_model):
    user = django_user_model.objects.get(username="alice")
    session = session_create_from_events(title="t", model="m", source_format="events", parser_version="1", events=[])
    job = replay_job_create(user=user, profiles=["default"], session_ids=[session.pk])
    for path, section in [
        (f"/sessions/{session.pk}/", "Sessions"),
        (f"/replays/{job.pk}", "Replays"),
        ("/replays/new", "Replays"),
        ("/replays/compare", "Replays"),
        ("/review/agreement", "Review"),
        ("/profiles/tune", "Profiles"),
        (f"/live/{session.pk}", "Live"),
    ]:
        answer = browser.get(path)
        assert answer.status_code == 200, path
        assert [name for name, _, current in links(answer.content).nav if current] == [section], path


@pytest.mark.django_db
def test_every_page_links_the_favicon_and_the_one_stylesheet(browser):
    page = browser.get("/").content.decode()
    assert '<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">' in page
    assert '<link rel="stylesheet" href="/static/css/loopguard.css">' in page
    favicon = finders.find("favicon.svg")  # Daphne serves static/ (asgi.py); the test client does not
    assert favicon and open(favicon).read().startswith('<svg xmlns="http://www.w3.org/2000/svg"')
