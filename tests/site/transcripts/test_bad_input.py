"""Every class of bad input is an error outcome naming the file and the line
or field; nothing of a bad file is stored; the other files of the same
upload still import."""

from __future__ import annotations

import pytest
from django.db import DatabaseError

from detector.importers import TranscriptError
from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.services import Upload, session_import_file, sessions_import_upload

GOOD = b'{"type": "session", "model": "m"}\n{"type": "content", "text": "fine"}\n'
TRUNCATED = b'{"type": "turn"}\n{"type": "content", "text": "abc'
LATIN1 = '{"type": "content", "text": "caf\u00e9"}\n'.encode("latin-1")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

# (file bytes, format, error line, error field, message)
BAD = {
    "invalid_json": (
        b'{"type": "turn"}\n{oops\n',
        "auto",
        2,
        None,
        "invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ),
    "truncated": (TRUNCATED, "auto", 2, None, "truncated JSON: Unterminated string starting at (column 29)"),
    "empty": (b"", "auto", None, None, "empty file"),
    "binary": (PNG, "auto", 3, None, "binary file (NUL byte), not a text transcript"),
    "wrong_encoding": (LATIN1, "auto", 1, None, "not UTF-8 text: byte 0xe9 at offset 32 cannot be decoded"),
    "wrong_format": (
        GOOD,
        "anthropic",
        None,
        None,
        "no Anthropic Messages stream events or response found; is this the right format?",
    ),
    "unknown_format": (
        b"[1, 2]",
        "auto",
        None,
        None,
        "could not tell the format; name it with --format "
        "(tried: events, openai, anthropic, claude-code, codex, gemini-cli, cline, otel)",
    ),
    "bad_field": (
        b'{"type": "content", "text": 5}\n',
        "events",
        1,
        "text",
        "field 'text' of a content event must be a string",
    ),
    "nul_in_text": (
        b'{"type": "content", "text": "a\\u0000b"}\n',
        "auto",
        None,
        "text",
        "event 2 holds a NUL character (\\u0000), which cannot be stored",
    ),
    "lone_surrogate_in_key": (
        b'{"type": "tool_call", "name": "x", "args": {"\\ud800": 1}}\n',
        "auto",
        None,
        "args.\ud800",
        "event 2 holds a key with an unpaired surrogate (\\ud800-\\udfff), which cannot be stored",
    ),
}


def stored_rows() -> tuple[int, int, int]:
    return Session.objects.count(), Event.objects.count(), RawUpload.objects.count()


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(BAD))
def test_service_names_the_file_and_line_or_field_and_stores_nothing(case):
    data, fmt, line, field, message = BAD[case]

    with pytest.raises(TranscriptError) as caught:
        session_import_file(data=data, filename="x.jsonl", fmt=fmt)

    assert (caught.value.file, caught.value.line, caught.value.field, caught.value.message) == (
        "x.jsonl", line, field, message
    )  # fmt: skip
    assert stored_rows() == (0, 0, 0)


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(set(BAD) - {"wrong_format"}))  # a named format applies to every file
def test_api_reports_the_bad_file_and_still_imports_the_good_one(case, api):
    data, fmt, line, field, message = BAD[case]
    files = [_named("bad.jsonl", data), _named("good.jsonl", GOOD)]
    # the API names its own parameter, not the command line's flag
    message = message.replace("--format", "the format parameter (a form field or ?format=)")

    response = api.post("/api/sessions", {"file": files, "format": fmt})

    assert response.status_code == 201
    body = response.json()
    assert body["errors"] == [{"file": "bad.jsonl", "line": line, "field": field, "message": message}]
    assert [(s["title"], s["events"]) for s in body["sessions"]] == [("good", 2)]
    assert stored_rows() == (1, 2, 1)


@pytest.mark.django_db
def test_a_wrong_format_named_fails_every_file_and_answers_400(api):
    response = api.post("/api/sessions?format=anthropic&filename=a.jsonl", GOOD, content_type="text/plain")

    assert response.status_code == 400
    message = "no Anthropic Messages stream events or response found; is this the right format?"
    assert response.json() == {
        "error": f"a.jsonl: {message}",
        "field": None,
        "line": None,
        "sessions": [],
        "errors": [{"file": "a.jsonl", "line": None, "field": None, "message": message}],
    }
    assert stored_rows() == (0, 0, 0)


@pytest.mark.django_db
def test_a_file_over_the_size_limit_is_refused_before_it_is_read(settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = len(GOOD) - 1

    def never() -> bytes:
        raise AssertionError("read")

    outcomes = sessions_import_upload([Upload("big.jsonl", len(GOOD), never), Upload.from_bytes("ok.jsonl", b"{}")])

    assert [o.line() for o in outcomes] == [
        f"error big.jsonl: {len(GOOD)} bytes, over the upload limit of {len(GOOD) - 1} bytes (LOOPGUARD_UPLOAD_MAX_MB)",
        "error ok.jsonl: could not tell the format; name it with --format "
        "(tried: events, openai, anthropic, claude-code, codex, gemini-cli, cline, otel)",
    ]
    with pytest.raises(TranscriptError) as caught:
        session_import_file(data=GOOD, filename="big.jsonl")
    assert str(caught.value) == outcomes[0].line().removeprefix("error ")
    assert stored_rows() == (0, 0, 0)


@pytest.mark.django_db
def test_a_raw_body_over_the_size_limit_is_an_error_naming_it(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = settings.LOOPGUARD_UPLOAD_MAX_BYTES = 10

    response = api.post("/api/sessions?filename=big.jsonl", GOOD, content_type="application/octet-stream")

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "file": "big.jsonl",
            "line": None,
            "field": None,
            "message": f"{len(GOOD)} bytes, over the upload limit of 10 bytes (LOOPGUARD_UPLOAD_MAX_MB)",
        }
    ]


@pytest.mark.django_db
def test_a_database_failure_after_the_events_are_written_leaves_nothing_of_that_file(monkeypatch):
    def disk_full(self, *args, **kwargs):
        assert Event.objects.count() == 5  # the events are in, inside the transaction
        raise DatabaseError("disk full")

    monkeypatch.setattr(RawUpload, "save", disk_full)
    events = b"".join(b'{"type": "content", "text": "%d"}\n' % n for n in range(4))

    with pytest.raises(DatabaseError):
        session_import_file(data=events, filename="x.jsonl")

    assert stored_rows() == (0, 0, 0)


@pytest.mark.django_db
def test_an_unreadable_file_is_its_own_error_line():
    def unreadable() -> bytes:
        raise PermissionError(13, "Permission denied")

    outcomes = sessions_import_upload([Upload("locked.jsonl", 3, unreadable), Upload.from_bytes("ok.jsonl", GOOD)])

    session = Session.objects.get()
    assert [o.line() for o in outcomes] == [
        "error locked.jsonl: cannot read: Permission denied",
        f"imported ok.jsonl: session {session.pk}, 2 events, format events",
    ]
    assert stored_rows() == (1, 2, 1)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("format=yaml", "format", "format must be auto or one of events, openai, anthropic, claude-code, "
         "codex, gemini-cli, cline, otel, not 'yaml'"),
        ("tag=" + "x" * 51, "tag", "tag 'xxxxxxxxxxxxxxxxxxxx'... is longer than 50 characters"),
    ],
)  # fmt: skip
def test_bad_upload_options_are_400_naming_the_field(api, query, field, message):
    response = api.post(f"/api/sessions?{query}", GOOD, content_type="text/plain")

    assert response.status_code == 400
    assert response.json() == {"error": message, "field": field, "line": None}
    assert stored_rows() == (0, 0, 0)


@pytest.mark.django_db
def test_multipart_without_a_file_field_is_400(api):
    response = api.post("/api/sessions", {"title": "x"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "no file: send one or more multipart fields named 'file'",
        "field": "file",
        "line": None,
    }


def _named(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


@pytest.mark.django_db
def test_a_raw_body_sent_as_urlencoded_is_never_parsed_as_a_form(api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    text = "&".join(f"a={n}" for n in range(50))  # a form of 50 fields, were it parsed as one
    data = b'{"type": "content", "text": "' + text.encode() + b'"}\n'

    response = api.post("/api/sessions?title=q", data, content_type="application/x-www-form-urlencoded")

    assert response.status_code == 201
    session = Session.objects.get()
    assert (session.title, session.events.get(seq=2).data["text"]) == ("q", text)
