from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from loopguard_site.timeline.selectors import PAGE_SIZE
from loopguard_site.transcripts.services import session_create_from_events


@pytest.fixture
def client(client, user):
    """The home page needs a login (issue 9): alice's browser."""
    client.force_login(user)
    return client


def create(title: str, model: str = "gpt-x") -> None:
    session_create_from_events(title=title, model=model, source_format="events", parser_version="events/1", events=[])


@pytest.mark.django_db
def test_it_lists_sessions_newest_first(client):
    create("older")
    create("newer", model="")

    response = client.get("/sessions/")

    assert response.status_code == 200
    rows = [(s.title, s.model) for s in response.context["page"].sessions]
    assert rows == [("newer", ""), ("older", "gpt-x")]
    table = response.content.decode().partition("<tbody>")[2]
    assert table.index("newer") < table.index("older")


@pytest.mark.django_db
def test_it_escapes_transcript_text(client):
    create('<script>alert("x")</script>', model="<img src=x onerror=alert(1)>")

    body = client.get("/sessions/").content.decode()

    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body


@pytest.mark.django_db
def test_it_says_when_there_are_no_sessions(client):
    body = client.get("/sessions/").content.decode()

    assert "No sessions yet." in body


@pytest.mark.django_db
def test_it_pages_long_lists(client):
    for n in range(PAGE_SIZE + 1):
        create(f"session {n}")

    first = client.get("/sessions/")
    link = re.search(r'rel="next" href="\?after=([^"]+)"', first.content.decode())
    second = client.get(f"/sessions/?after={link[1]}")

    assert len(first.context["page"].sessions) == PAGE_SIZE
    oldest = first.context["page"].sessions[-1]
    assert link[1] == quote(f"{oldest.created.isoformat()},{oldest.pk}")
    assert [s.title for s in second.context["page"].sessions] == ["session 0"]
    assert f"1 of {PAGE_SIZE + 1} sessions" in second.content.decode()
