"""A raw upload kept in the database is compressed (zlib) and reads back
byte for byte, through the service and the download; rows stored before
the compression (migration 0009) read back as they were stored."""

from __future__ import annotations

import hashlib
import zlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from loopguard_site.accounts.services import default_project
from loopguard_site.transcripts.models import RawUpload, Session
from loopguard_site.transcripts.raw_uploads import raw_upload_read
from loopguard_site.transcripts.services import session_import_file

# every byte a file may hold, and a BOM: nothing is normalised on the way
DATA = b"\xef\xbb\xbf" + b"".join(
    b'{"type": "content", "text": "chunk %d \\u00e9 \xc3\xa9"}\r\n' % n for n in range(500)
)


@pytest.mark.django_db
def test_an_upload_round_trips_byte_for_byte_through_the_compressed_column(database, api):
    session = session_import_file(data=DATA, filename="up.jsonl")

    row = RawUpload.objects.get(session=session)
    assert (row.content_encoding, row.file.name, row.size) == ("zlib", "", len(DATA))
    assert len(row.content) < len(DATA) // 10
    assert zlib.decompress(row.content) == raw_upload_read(row) == DATA
    assert row.sha256 == hashlib.sha256(DATA).hexdigest()
    assert api.get(f"/api/sessions/{session.pk}/raw").content == DATA


BEFORE = [("transcripts", "0008_session_layout")]


@pytest.mark.django_db(transaction=True)
def test_an_upload_stored_before_the_migration_reads_back_as_it_was_stored(database):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    session = Session.objects.create(project=default_project(), title="old", source_format="events")
    old.get_model("transcripts", "RawUpload").objects.create(
        session_id=session.pk, filename="old.jsonl", content=DATA, size=len(DATA), sha256="0" * 64
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    row = RawUpload.objects.get(session=session)
    assert (row.content_encoding, bytes(row.content)) == ("", DATA)
    assert raw_upload_read(row) == DATA
