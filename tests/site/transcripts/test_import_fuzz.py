"""Random and mutated uploads through the import service (zips included)
never raise: every file ends as a stored session or a clean error naming it,
and what is stored is whole."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.services import Upload, sessions_import_upload
from tests.detector.importers.test_fuzz import FORMAT_NAMES, mutated_samples

FUZZ = settings(
    deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
# strings PostgreSQL cannot store, written as JSON escapes
UNSTORABLE = st.sampled_from(["\\u0000", "\\ud800", "\\udfff", "a\\u0000b", "\\ud83d"])


@st.composite
def events_with_escapes(draw) -> bytes:
    """An events file whose text or keys may hold escapes the database refuses."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        text = json.dumps(draw(st.text(max_size=10)))[1:-1] + draw(st.one_of(st.just(""), UNSTORABLE))
        kind = draw(st.sampled_from(["content", "reasoning", "tool_call"]))
        if kind == "tool_call":
            lines.append('{"type": "tool_call", "name": "t", "args": {"' + text + '": "' + text + '"}}')
        else:
            lines.append('{"type": "' + kind + '", "text": "' + text + '"}')
    return ("\n".join(lines) + "\n").encode()


@st.composite
def zips(draw) -> bytes:
    buffer = io.BytesIO()
    names = st.sampled_from(["a.jsonl", "dir/b.json", "../up.jsonl", "/abs.jsonl", "c.txt", "nested.zip"])
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in draw(st.lists(names, max_size=3, unique=True)):
            archive.writestr(name, draw(st.one_of(mutated_samples(), events_with_escapes())))
    data = bytearray(buffer.getvalue())
    if data and draw(st.booleans()):  # damage the archive itself
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


FILES = st.one_of(st.binary(max_size=2000), mutated_samples(), events_with_escapes(), zips())


def assert_clean_outcomes(files: list[bytes], fmt: str) -> None:
    before = Session.objects.count()
    uploads = [Upload.from_bytes(f"f{n}.bin", data) for n, data in enumerate(files)]

    outcomes = sessions_import_upload(uploads, fmt=fmt)

    stored = [o.session for o in outcomes if o.session is not None]
    for outcome in outcomes:
        assert (outcome.session is None) != (outcome.error is None)
        if outcome.error is not None:
            assert outcome.line().startswith(f"error {outcome.file}")
            assert outcome.file.split(":")[0] in {u.name for u in uploads}
    assert Session.objects.count() == before + len(stored)
    for session in stored:
        assert Event.objects.filter(session=session).count() == session.event_count
        assert RawUpload.objects.filter(session=session).count() == 1


@pytest.mark.django_db
@settings(FUZZ, max_examples=250)
@given(st.lists(FILES, min_size=1, max_size=3), FORMAT_NAMES)
def test_random_and_mutated_uploads_end_cleanly(files, fmt):
    assert_clean_outcomes(files, fmt)


@pytest.mark.django_db
@settings(FUZZ, max_examples=100)
@given(events_with_escapes())
def test_unstorable_strings_are_refused_by_name_or_stored_exactly(data):
    (outcome,) = sessions_import_upload([Upload.from_bytes("e.jsonl", data)], fmt="events")

    if outcome.session is None:
        assert "which cannot be stored" in outcome.error.message
        assert outcome.error.field
    else:
        events = list(outcome.session.events.order_by("seq").values_list("data", flat=True))
        assert events[1:] == [json.loads(line) for line in data.decode().splitlines()]
