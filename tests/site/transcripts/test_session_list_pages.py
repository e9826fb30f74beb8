"""Keyset pages of the session list (issue 16 item 11, issue 21 item 4):
exact rows on page boundaries where sort keys tie, the page's and the API's
links keep every filter, and a deep page costs the queries of the first."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from loopguard_site.replay.models import SessionVerdict
from loopguard_site.review.models import Label
from loopguard_site.timeline import api_views, views
from loopguard_site.timeline.selectors import END, session_list, session_page
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_from_events

T0 = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
LIST = reverse("timeline:session_list")


@pytest.fixture
def client(client, user):
    client.force_login(user)
    return client


def make(title: str, *, minutes: int, model: str = "m", events: int = 0) -> Session:
    session = session_create_from_events(
        title=title, model=model, source_format="events", parser_version="events/1", events=[{"type": "turn"}] * events
    )
    Session.objects.filter(pk=session.pk).update(created=T0 + timedelta(minutes=minutes))
    return session


@pytest.fixture
def tied() -> list[Session]:
    """Seven sessions, three of them created at the same instant and two at
    another: made in this order, so ids rise down the list."""
    return [make(f"s{n}", minutes=minute) for n, minute in enumerate([0, 0, 0, 1, 1, 2, 3])]


def walk(sort: str, size: int) -> list[list[int]]:
    """Every page's ids, following `next` from the first page."""
    pages, after = [], None
    while True:
        page = session_page(session_list(sort=sort), sort=sort, size=size, after=after)
        pages.append([s.pk for s in page.sessions])
        if page.next is None:
            return pages
        after = page.next


@pytest.mark.django_db
def test_pages_split_ties_on_the_id_exactly(tied):
    ids = [s.pk for s in tied]

    assert walk("-created", 2) == [[ids[6], ids[5]], [ids[4], ids[3]], [ids[2], ids[1]], [ids[0]]]
    assert walk("created", 2) == [[ids[0], ids[1]], [ids[2], ids[3]], [ids[4], ids[5]], [ids[6]]]
    assert walk("-created", 3) == [[ids[6], ids[5], ids[4]], [ids[3], ids[2], ids[1]], [ids[0]]]


@pytest.mark.django_db
def test_pages_split_ties_of_titles_and_event_counts(tied):
    Session.objects.filter(pk__in=[s.pk for s in tied[2:5]]).update(title="same", event_count=7)
    ids = [s.pk for s in tied]

    assert walk("title", 2) == [[ids[0], ids[1]], [ids[5], ids[6]], [ids[2], ids[3]], [ids[4]]]
    assert walk("-events", 2) == [[ids[4], ids[3]], [ids[2], ids[6]], [ids[5], ids[1]], [ids[0]]]


@pytest.mark.django_db
def test_previous_and_last_pages_walk_back_over_the_same_rows(tied):
    ids = [s.pk for s in tied]
    sessions = session_list()

    last = session_page(sessions, size=3, before=END)
    middle = session_page(sessions, size=3, before=last.previous)
    first = session_page(sessions, size=3, before=middle.previous)

    assert [s.pk for s in last.sessions] == [ids[2], ids[1], ids[0]]
    assert (last.previous.id, last.next) == (ids[2], None)
    assert [s.pk for s in middle.sessions] == [ids[5], ids[4], ids[3]]
    assert (middle.previous.id, middle.next.id) == (ids[5], ids[3])
    # one row is left before the middle page: the first page is shown whole
    assert [s.pk for s in first.sessions] == [ids[6], ids[5], ids[4]]
    assert (first.previous, first.next.id, first.total) == (None, ids[4], 7)


def links(html: str) -> dict[str, str]:
    """The pager's links by their text."""
    pager = html.partition('<nav class="pager"')[2].partition("</nav>")[0]
    return {
        unescape(text).strip(): unescape(href)
        for href, text in re.findall(r'<a [^>]*href="([^"]*)">([^<]*)</a>', pager)
    }


def listed(response) -> list[int]:
    return [s.pk for s in response.context["page"].sessions]


@pytest.mark.django_db
def test_the_pages_links_keep_every_filter_and_reach_every_row_once(client, user, monkeypatch):
    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    made = []
    for n in range(12):  # s2, s4 and s8 pass every filter; s10 is on the next day
        session = make(f"s{n}", minutes=n // 2 + (24 * 60 if n >= 10 else 0), model="gpt" if n % 3 else "other")
        SessionVerdict.objects.create(session=session, profile="strict", looped=n % 2 == 0, detection_count=n % 2)
        if n % 4 != 3:
            Label.objects.create(session=session, item="session", reviewer=user, label="clean")
        made.append(session.pk)
    query = "model=gpt&profile=strict&verdict=loop&label=labelled&created=2026-05-01&sort=-created"
    expected = {"model": ["gpt"], "profile": ["strict"], "verdict": ["loop"], "label": ["labelled"],
                "created": ["2026-05-01"], "sort": ["-created"]}  # fmt: skip

    pages, url = [], f"{LIST}?{query}"
    while url:
        response = client.get(url)
        pages.append(listed(response))
        found = links(response.content.decode())
        for href in found.values():
            params = parse_qs(urlsplit(href).query)
            assert {k: v for k, v in params.items() if k not in ("after", "before")} == expected, href
        url = found.get("next →") and LIST + found["next →"]
    assert pages == [[made[8], made[4]], [made[2]]]
    assert "1 of 3 sessions" in response.content.decode()
    back = client.get(LIST + links(response.content.decode())["← previous"])
    assert listed(back) == pages[0]
    last = client.get(f"{LIST}?{query}&before=end")
    assert listed(last) == [made[4], made[2]]  # the last page is whole


@pytest.mark.django_db
def test_the_api_next_link_keeps_the_filters(api, user, monkeypatch):
    monkeypatch.setattr(api_views, "PAGE_SIZE", 1)
    sessions = [make(f"s{n}", minutes=0, model="gpt" if n % 2 else "other") for n in range(7)]
    Label.objects.create(session=sessions[1], item="session", reviewer=user, label="missed_loop")

    seen, url = [], "/api/sessions?model=gpt&sort=created&label=unlabelled"
    while url:
        answer = api.get(url).json()
        seen.append([row["id"] for row in answer["results"]])
        url = answer["next"]
        if url:
            assert parse_qs(urlsplit(url).query).keys() == {"model", "sort", "label", "after"}

    assert seen == [[sessions[3].pk], [sessions[5].pk]]
    assert api.get("/api/sessions?model=gpt&sort=created").json()["next"] is not None


@pytest.mark.django_db
def test_a_deep_page_asks_the_same_queries_as_the_first_and_skips_no_rows(client, monkeypatch):
    monkeypatch.setattr(views, "PAGE_SIZE", 3)
    made = [make(f"s{n}", minutes=n // 4) for n in range(30)]
    for session in made:
        SessionVerdict.objects.create(session=session, profile="default", looped=True, detection_count=1)

    def queries(url: str) -> tuple[list[str], list[int]]:
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url)
        return [q["sql"] for q in captured.captured_queries], listed(response)

    fifth = Session.objects.get(pk=made[4].pk)
    first, first_rows = queries(LIST)
    deep, deep_rows = queries(f"{LIST}?after={fifth.created.isoformat()},{fifth.pk}".replace("+", "%2B"))
    last, last_rows = queries(f"{LIST}?before=end")

    assert len(first) == len(deep) == len(last)
    assert not [sql for sql in first + deep + last if "OFFSET" in sql.upper()]
    assert (first_rows, deep_rows, last_rows) == (
        [made[29].pk, made[28].pk, made[27].pk],
        [made[3].pk, made[2].pk, made[1].pk],
        [made[2].pk, made[1].pk, made[0].pk],
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("after=yesterday", "after"),
        ("after=2026-05-01T09:30:00,4", "after"),  # no UTC offset
        ("sort=events&after=many,4", "after"),
        ("before=2026-05-01T09:30:00%2B00:00", "before"),
        ("after=2026-05-01T09:30:00%2B00:00,1&before=end", "before"),
    ],
)
def test_a_bad_place_is_named_by_the_page_and_the_api(client, api, query, field):
    make("s", minutes=0)

    page = client.get(f"{LIST}?{query}")
    answer = api.get(f"/api/sessions?{query}")

    assert page.context["filter_error"].startswith(f"{field} ")
    assert listed(page) == list(Session.objects.values_list("pk", flat=True))
    if "before" in query:  # the API pages forward only: it ignores before=
        assert answer.status_code == 200
    else:
        assert (answer.status_code, answer.json()["field"]) == (400, field)
