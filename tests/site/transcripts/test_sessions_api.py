"""GET /api/sessions/<id>, /events and /raw, the live session of POST
/api/sessions?live=1, and authentication."""

from __future__ import annotations

import pytest

from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_import_file
from tests.shared_paths import FORMATS_DIR

OPENAI = FORMATS_DIR / "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt"


@pytest.fixture
def stored(user) -> Session:
    return session_import_file(data=OPENAI.read_bytes(), filename=OPENAI.name, uploader=user, tags=["b", "a"])


@pytest.mark.django_db
def test_detail_answers_the_contract_fields(api, stored):
    response = api.get(f"/api/sessions/{stored.pk}")

    assert response.status_code == 200
    assert response.json() == {
        "id": stored.pk,
        "title": "vercel__ai__deepseek-tool-call.chunks",
        "model": "deepseek-v4-flash",
        "format": "openai",
        "state": "stored",
        "events": 21,
        "created": stored.created.isoformat(),
        "parser_version": "openai/1",
        "tags": ["a", "b"],
        "profile": "default",  # the profile its model selects: it is scanned with that
        "verdicts": [],  # none until the scan has run
    }


@pytest.mark.django_db
def test_raw_download_is_the_uploaded_file_byte_for_byte(api, stored):
    response = api.get(f"/api/sessions/{stored.pk}/raw")

    assert response.status_code == 200
    assert response.content == OPENAI.read_bytes()
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == f'attachment; filename="{OPENAI.name}"'


@pytest.mark.django_db
def test_raw_download_of_a_non_ascii_name_is_rfc5987_encoded(api):
    session = session_import_file(data=b'{"type": "turn"}\n', filename="über log.jsonl")

    response = api.get(f"/api/sessions/{session.pk}/raw")

    assert response["Content-Disposition"] == "attachment; filename*=utf-8''%C3%BCber%20log.jsonl"
    assert response.content == b'{"type": "turn"}\n'


@pytest.mark.django_db
def test_events_are_paged_by_seq(api, stored):
    everything = list(stored.events.order_by("seq").values_list("data", flat=True))

    first = api.get(f"/api/sessions/{stored.pk}/events?limit=8").json()
    second = api.get(f"/api/sessions/{stored.pk}/events?from={first['next']}&limit=8").json()
    last = api.get(f"/api/sessions/{stored.pk}/events?from=17&limit=8").json()

    assert first["next"] == 9 and second["next"] == 17 and last["next"] is None
    assert [e.pop("seq") for e in first["events"]] == list(range(1, 9))
    assert first["events"] == everything[:8]
    assert [e["seq"] for e in last["events"]] == [17, 18, 19, 20, 21]
    assert last["events"][-1] == {"seq": 21, "type": "finish", "reason": "tool_calls"}


@pytest.mark.django_db
def test_an_event_field_named_seq_does_not_hide_the_stored_seq(api):
    session = session_import_file(data=b'{"type": "turn", "seq": 99}\n{"type": "turn"}\n', filename="s.jsonl")

    body = api.get(f"/api/sessions/{session.pk}/events").json()

    assert [(e["seq"], e["type"]) for e in body["events"]] == [(1, "session"), (2, "turn"), (3, "turn")]


@pytest.mark.django_db
def test_all_events_by_default(api, stored):
    body = api.get(f"/api/sessions/{stored.pk}/events").json()

    assert (len(body["events"]), body["next"]) == (21, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("limit=0", "limit", "limit must be between 1 and 10000"),
        ("from=x", "from", "from must be a whole number, not 'x'"),
    ],
)
def test_bad_event_paging_is_400_naming_the_parameter(api, stored, query, field, message):
    response = api.get(f"/api/sessions/{stored.pk}/events?{query}")

    assert (response.status_code, response.json()) == (400, {"error": message, "field": field, "line": None})


@pytest.mark.django_db
@pytest.mark.parametrize("suffix", ["", "/events", "/raw"])
def test_a_missing_session_is_404(api, suffix):
    response = api.get(f"/api/sessions/999{suffix}")

    assert (response.status_code, response.json()) == (
        404,
        {"error": "no session with id 999", "field": None, "line": None},
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model", "profile"), [("gemini-3-pro-preview", "preview"), ("gpt-5", "default"), ("", "default")]
)
def test_live_creates_an_empty_live_session_with_the_profile_for_its_model(api, user, model, profile):
    response = api.post(f"/api/sessions?live=1&model={model}&tag=live")

    session = Session.objects.get()
    assert response.status_code == 201
    assert response.json() == {
        "sessions": [
            {"id": session.pk, "title": f"live {model}".strip(), "model": model, "format": "events", "events": 0}
        ],
        "errors": [],
    }
    assert (session.state, session.profile, session.uploader, session.tag_names()) == ("live", profile, user, ["live"])
    assert api.get(f"/api/sessions/{session.pk}/raw").json() == {
        "error": f"session {session.pk} has no raw upload (a live session)",
        "field": None,
        "line": None,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/sessions", "/api/sessions/1", "/api/sessions/1/events", "/api/sessions/1/raw"])
def test_the_api_needs_a_token_or_a_login(client, path):
    response = client.get(path)

    assert response.status_code == 401


@pytest.mark.django_db
def test_a_logged_in_browser_must_send_the_csrf_token_to_upload(user):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)

    response = browser.post("/api/sessions", b'{"type": "turn"}\n', content_type="text/plain")

    assert (response.status_code, response.json()["error"]) == (403, "CSRF check failed")
    assert Session.objects.count() == 0
