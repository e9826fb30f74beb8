"""The import path and the list filters on SQLite, the embedded lab's
database (the rest of this folder runs on PostgreSQL): the event writer's
multi-row INSERTs, tags and has_detections filters, the raw download."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from loopguard_site.replay.models import Detection
from loopguard_site.timeline.selectors import session_list
from loopguard_site.transcripts.event_rows import SQLITE_BATCH
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_import_file
from tests.shared_paths import FORMATS_DIR

pytestmark = pytest.mark.embedded

CODEX = next((FORMATS_DIR / "codex_cli").iterdir())


@pytest.mark.django_db
def test_a_zip_uploaded_through_the_api_is_stored_and_downloadable(api):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("codex/rollout.jsonl", CODEX.read_bytes())
        archive.writestr("bad.jsonl", b"{")

    response = api.post("/api/sessions?filename=up.zip&tag=emb", buffer.getvalue(), content_type="application/zip")

    session = Session.objects.get()
    assert connection.vendor == "sqlite"
    assert response.status_code == 201
    assert response.json()["sessions"] == [
        {"id": session.pk, "title": "rollout", "model": "synthetic-model", "format": "codex", "events": 14}
    ]
    assert [e["file"] for e in response.json()["errors"]] == ["up.zip:bad.jsonl"]
    assert api.get(f"/api/sessions/{session.pk}/raw").content == CODEX.read_bytes()
    assert session.tag_names() == ["emb"]


@pytest.mark.django_db
def test_events_span_insert_batches_in_order():
    lines = b"".join(b'{"type": "content", "text": "%d"}\n' % n for n in range(SQLITE_BATCH * 2 + 1))

    session = session_import_file(data=lines, filename="many.jsonl")

    texts = [data.get("text") for data in session.events.order_by("seq").values_list("data", flat=True)]
    assert texts == [None, *(str(n) for n in range(SQLITE_BATCH * 2 + 1))]
    assert list(session.events.values_list("seq", flat=True)) == list(range(1, SQLITE_BATCH * 2 + 3))


@pytest.mark.django_db
def test_tag_search_and_detection_filters():
    flagged = session_import_file(data=b'{"type": "turn"}\n', filename="a.jsonl", tags=["loop", "prod"])
    session_import_file(data=b'{"type": "turn"}\n', filename="b.jsonl", tags=["prod"])
    Detection.objects.create(
        session=flagged, profile="default", event_seq=1, detector="d", type="t", channel="content",
        start=0, end=1, at=1, unit="x", period=1, repeats=2, action="warn", message="m",
    )  # fmt: skip

    assert [s.title for s in session_list(tag="prod", sort="title")] == ["a", "b"]
    assert [s.title for s in session_list(has_detections=True)] == ["a"]
    assert [s.title for s in session_list(has_detections=False)] == ["b"]
    assert [s.title for s in session_list(q="LOO")] == ["a"]


@pytest.mark.django_db
def test_the_admin_lists_and_searches_sessions_by_tag(client):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", None)
    client.force_login(admin)
    session_import_file(data=b'{"type": "turn"}\n', filename="tagged.jsonl", tags=["needle", "other"])

    response = client.get("/admin/transcripts/session/?q=needle")

    assert response.status_code == 200
    assert [s.title for s in response.context["cl"].result_list] == ["tagged"]
