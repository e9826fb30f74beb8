"""The upload page's server side: login, form errors, outcome lines (the
browser tests drive the same page in Chromium)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from detector.importers import FORMATS
from loopguard_site.transcripts.models import Session

GOOD = b'{"type": "session", "model": "<b>m</b>"}\n{"type": "content", "text": "fine"}\n'


@pytest.mark.django_db
def test_it_needs_a_login(client):
    response = client.get("/upload/")

    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/upload/")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"format": "auto"}, "choose or drop at least one file"),
        ({"format": "yaml", "file": [SimpleUploadedFile("a.jsonl", GOOD)]}, "Format: &#x27;yaml&#x27; is not one"),
        ({"tags": "x" * 51, "file": [SimpleUploadedFile("a.jsonl", GOOD)]}, "is longer than 50 characters"),
    ],
)
def test_form_errors_are_400_and_import_nothing(client, user, fields, message):
    client.force_login(user)

    response = client.post("/upload/", fields)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert Session.objects.count() == 0


@pytest.mark.django_db
def test_each_file_gets_its_outcome_line_escaped(client, user):
    client.force_login(user)
    # no slash in the name: Django keeps only a file name's last path part
    files = [SimpleUploadedFile("<b>a.jsonl", GOOD), SimpleUploadedFile("b.jsonl", b"")]

    response = client.post("/upload/", {"file": files, "format": "auto", "title": "", "tags": "one, two"})

    session = Session.objects.get()
    body = response.content.decode()
    assert response.status_code == 200
    assert [o.line() for o in response.context["outcomes"]] == [
        f"imported <b>a.jsonl: session {session.pk}, 2 events, format events",
        "error b.jsonl: empty file",
    ]
    assert "<td>&lt;b&gt;a.jsonl</td>" in body
    assert f'<a href="/sessions/{session.pk}/">#{session.pk} &lt;b&gt;a</a>' in body
    assert "<b>" not in body
    assert (session.title, session.model, session.uploader, session.tag_names()) == (
        "<b>a", "<b>m</b>", user, ["one", "two"]
    )  # fmt: skip


@pytest.mark.django_db
def test_the_empty_form_says_what_it_reads_and_how_much(client, user, settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = 7 * 1024 * 1024
    client.force_login(user)

    body = client.get("/upload/").content.decode()

    rows = re.findall(r"<tr><td class=\"format-name\"><code>([^<]+)</code></td><td>([^<]+)</td></tr>", body)
    assert [name for name, _ in rows] == list(FORMATS)
    assert rows[1] == ("openai", "OpenAI Chat Completions (and compatible servers).")
    assert rows[3] == (
        "claude-code",
        "Claude Code session JSON Lines (~/.claude/projects/&lt;project&gt;/&lt;session&gt;.jsonl).",
    )
    assert "Up to 7 MB a file" in body
    posted = client.post("/upload/", {"file": [SimpleUploadedFile("a.jsonl", GOOD)], "format": "auto"})
    assert 'id="upload-formats"' not in posted.content.decode()  # the outcome takes its place
