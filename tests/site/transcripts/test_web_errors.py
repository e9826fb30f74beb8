"""Errors in web terms: the upload page names its Format menu, the API its
query parameters, and no error reaching a page or the API mentions a
command-line flag (the command line keeps its `--format`)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from loopguard_site.transcripts.services import Upload, sessions_import_upload

UNRECOGNISED = b"[1, 2]"
GOOD = b'{"type": "session", "model": "m"}\n{"type": "content", "text": "fine"}\n'
TRIED = "(tried: events, openai, anthropic, claude-code, codex, gemini-cli, cline, otel)"
FLAG = re.compile(r"(?<![\w-])--[a-z]")


@pytest.fixture
def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_upload_page_names_its_format_menu(browser):
    answer = browser.post("/upload/", {"format": "auto", "file": [SimpleUploadedFile("odd.json", UNRECOGNISED)]})
    page = answer.content.decode()
    assert answer.status_code == 200
    assert f"error odd.json: could not tell the format; name it with the Format menu {TRIED}" in page
    refused = browser.post("/upload/", {"format": "yaml", "file": [SimpleUploadedFile("a.jsonl", GOOD)]})
    assert refused.status_code == 400
    assert "Format: &#x27;yaml&#x27; is not one of the Format menu&#x27;s choices" in refused.content.decode()
    for body in (page, refused.content.decode()):
        errors = re.findall(r'class="(?:outcome failed|error)"[^>]*>(.*?)</', body, re.S)
        assert errors and not [e for e in errors if FLAG.search(e)]


@pytest.mark.django_db
def test_the_api_names_its_query_parameters(api):
    answer = api.post("/api/sessions?filename=odd.json", UNRECOGNISED, content_type="text/plain")
    (error,) = answer.json()["errors"]
    assert error["message"] == (
        f"could not tell the format; name it with the format parameter (a form field or ?format=) {TRIED}"
    )
    bad = [
        api.post("/api/sessions?format=yaml", GOOD, content_type="text/plain"),
        api.get("/api/sessions?sort=sideways"),
        api.get("/api/sessions?after=first"),
        api.get("/api/sessions?has_detections=perhaps"),
        api.get("/api/sessions?project=mine"),
    ]
    bodies = [response.json() for response in bad]
    assert [(response.status_code, body["field"]) for response, body in zip(bad, bodies, strict=True)] == [
        (400, "format"), (400, "sort"), (400, "after"), (400, "has_detections"), (400, "project")
    ]  # fmt: skip
    for body in bodies:
        assert body["error"].startswith(body["field"] + " "), body
    assert not [m for m in [error["message"], *(b["error"] for b in bodies)] if FLAG.search(m)]


@pytest.mark.django_db
def test_the_command_line_keeps_its_flag():
    (outcome,) = sessions_import_upload([Upload.from_bytes("odd.json", UNRECOGNISED)])
    assert outcome.line() == f"error odd.json: could not tell the format; name it with --format {TRIED}"
