"""Each real sample in fixtures/formats, imported through the service, the
API's multipart upload and its raw body, is stored as exactly the expected
events (the table the importers' own sample tests count by hand)."""

from __future__ import annotations

import pytest

from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.raw_uploads import raw_upload_read
from loopguard_site.transcripts.services import session_import_file
from tests.detector.importers.test_samples import SAMPLES, assert_events_as_expected
from tests.shared_paths import FORMATS_DIR


def assert_stored_as_expected(session: Session, name: str) -> None:
    expected = SAMPLES[name]
    events = list(session.events.order_by("seq").values_list("data", flat=True))
    assert session.parser_version == expected["format"]
    assert session.source_format == expected["format"].split("/")[0]
    assert session.model == (expected["model"] or "")
    assert session.event_count == len(events)
    assert_events_as_expected(events, expected)
    assert raw_upload_read(session.raw_upload) == (FORMATS_DIR / name).read_bytes()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_imports_through_the_service(name, user):
    path = FORMATS_DIR / name

    session = session_import_file(data=path.read_bytes(), filename=path.name, uploader=user, tags=["sample"])

    assert_stored_as_expected(session, name)
    assert (session.uploader, session.tag_names(), session.state) == (user, ["sample"], "stored")
    assert session.raw_upload.filename == path.name


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_imports_through_the_api_multipart_upload(name, api):
    path = FORMATS_DIR / name
    with path.open("rb") as file:
        response = api.post("/api/sessions", {"file": file})

    assert response.status_code == 201, response.content
    body = response.json()
    session = Session.objects.get()
    assert body == {
        "sessions": [
            {
                "id": session.pk,
                "title": session.title,
                "model": SAMPLES[name]["model"] or "",
                "format": SAMPLES[name]["format"].split("/")[0],
                "events": session.event_count,
            }
        ],
        "errors": [],
    }
    assert_stored_as_expected(session, name)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_imports_through_the_api_raw_body_with_its_format_named(name, api):
    path = FORMATS_DIR / name
    fmt = SAMPLES[name]["format"].split("/")[0]

    response = api.post(
        f"/api/sessions?format={fmt}&title=Raw+{fmt}&filename={path.name}",
        path.read_bytes(),
        content_type="application/octet-stream",
    )

    assert response.status_code == 201, response.content
    session = Session.objects.get()
    assert response.json()["sessions"][0]["id"] == session.pk
    assert session.title == f"Raw {fmt}"
    assert session.raw_upload.filename == path.name
    assert_stored_as_expected(session, name)


@pytest.mark.django_db
def test_all_samples_in_one_upload_each_get_a_session(api):
    paths = [FORMATS_DIR / name for name in sorted(SAMPLES)]
    files = [path.open("rb") for path in paths]
    try:
        response = api.post("/api/sessions", {"file": files, "tag": "batch"})
    finally:
        for file in files:
            file.close()

    assert response.status_code == 201
    assert [s["title"] for s in response.json()["sessions"]] == [
        Session.objects.get(pk=s["id"]).title for s in response.json()["sessions"]
    ]
    stored = {s.raw_upload.filename: s for s in Session.objects.all()}
    assert sorted(stored) == sorted(path.name for path in paths)
    for name in SAMPLES:
        assert_stored_as_expected(stored[name.split("/")[1]], name)
        assert stored[name.split("/")[1]].tag_names() == ["batch"]
