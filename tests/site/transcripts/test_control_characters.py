"""Bidi and other hidden characters in untrusted names (file names, titles,
model names) are shown escaped on every page that shows them: a right-to-left
override must not make "invoice\\u202etxt.exe" read as an .exe's opposite."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from loopguard_site.transcripts.models import Session
from tests.members import member

RLO = "\u202e"
FILE = f"invoice{RLO}lmthtxt.jsonl"
MODEL = "gpt\u200b-4"  # a zero-width space: looks like gpt-4


@pytest.fixture
def browser(django_user_model) -> Client:
    client = Client()
    client.force_login(member(django_user_model.objects.create_user("reader")))
    return client


@pytest.mark.django_db
def test_file_names_titles_and_models_are_shown_escaped(browser):
    lines = [{"type": "session", "model": MODEL}, {"type": "content", "text": "hello"}]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as members:  # a member's name arrives as the archive holds it
        members.writestr(FILE, "".join(json.dumps(line) + "\n" for line in lines))
    upload = SimpleUploadedFile("upload.zip", archive.getvalue())
    outcome = browser.post(
        reverse("transcripts:session_upload"), {"file": upload, "title": f"report{RLO}fdp.exe"}
    ).content.decode()

    assert "invoice\\u202elmthtxt.jsonl" in outcome
    session_list = browser.get(reverse("timeline:session_list")).content.decode()
    assert "report\\u202efdp.exe" in session_list and "gpt\\u200b-4" in session_list
    session_page = browser.get(Session.objects.get().get_absolute_url()).content.decode()
    assert "report\\u202efdp.exe" in session_page and "gpt\\u200b-4" in session_page
    for page in (outcome, session_list, session_page):
        shown = re.sub(r'value="[^"]*"', "", page)  # form values stay what was typed (sent back as they are)
        assert RLO not in shown and "\u200b" not in shown
