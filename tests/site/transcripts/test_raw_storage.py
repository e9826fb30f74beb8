"""Raw uploads outside the database (LOOPGUARD_RAW_STORAGE): kept in real
files, or in an S3-compatible bucket served over HTTP by moto's server in a
thread; the download reads them wherever they are, `loopguard
move-raw-uploads` moves rows both ways (checking every copy), and a deleted
session's file goes with it."""

from __future__ import annotations

import hashlib
import zlib
from datetime import timedelta

import boto3
import pytest
from django.utils import timezone
from moto.server import ThreadedMotoServer

from detector.cli import main
from loopguard_site.transcripts.models import RawUpload, Session
from loopguard_site.transcripts.services import session_import_file
from tests.shared_paths import FORMATS_DIR

SAMPLES = [
    FORMATS_DIR / "openai_stream/vercel__ai__deepseek-tool-call.chunks.txt",
    FORMATS_DIR / "claude_code" / next(p.name for p in sorted((FORMATS_DIR / "claude_code").iterdir()) if p.is_file()),
]
DB_STORAGE = "django.core.files.storage.FileSystemStorage"


@pytest.fixture
def raw_dir(settings, tmp_path):
    """The raw-upload storage: real files under a fresh directory."""
    settings.STORAGES = {**settings.STORAGES, "raw_uploads": {"BACKEND": DB_STORAGE, "OPTIONS": {"location": tmp_path}}}
    return tmp_path


def imported(user) -> list[Session]:
    return [session_import_file(data=path.read_bytes(), filename=path.name, uploader=user) for path in SAMPLES]


def where(session: Session) -> tuple[str, int]:
    """(stored file name, bytes the database row keeps, once uncompressed) of the session's raw upload."""
    raw = RawUpload.objects.get(session=session)
    kept = zlib.decompress(raw.content) if raw.content_encoding == RawUpload.Encoding.ZLIB else bytes(raw.content)
    return raw.file.name, len(kept)


def name_of(session: Session, path) -> str:
    return f"{session.pk}/{hashlib.sha256(path.read_bytes()).hexdigest()}"


def downloads(api, sessions) -> list[bytes]:
    return [api.get(f"/api/sessions/{s.pk}/raw").content for s in sessions]


@pytest.mark.django_db
def test_file_mode_keeps_each_upload_in_a_file_the_download_reads(database, settings, raw_dir, api, user):
    settings.LOOPGUARD_RAW_STORAGE = "file"

    sessions = imported(user)

    assert [where(s) for s in sessions] == [(name_of(s, p), 0) for s, p in zip(sessions, SAMPLES, strict=True)]
    assert [(raw_dir / name_of(s, p)).read_bytes() for s, p in zip(sessions, SAMPLES, strict=True)] == [
        p.read_bytes() for p in SAMPLES
    ]
    assert downloads(api, sessions) == [p.read_bytes() for p in SAMPLES]


@pytest.mark.django_db
def test_rows_move_into_files_and_back_and_stay_readable(
    database, settings, raw_dir, api, user, capsys, django_capture_on_commit_callbacks
):
    sessions = imported(user)  # db mode, the default
    expected = [p.read_bytes() for p in SAMPLES]
    assert [where(s) for s in sessions] == [("", len(data)) for data in expected]

    settings.LOOPGUARD_RAW_STORAGE = "file"
    assert main(["move-raw-uploads", "--dry-run"]) == 0
    assert [where(s) for s in sessions] == [("", len(data)) for data in expected]  # a dry run moves nothing
    assert main(["move-raw-uploads"]) == 0
    in_files = [where(s) for s in sessions]
    files_read = downloads(api, sessions)
    assert main(["move-raw-uploads"]) == 0  # nothing left to move
    settings.LOOPGUARD_RAW_STORAGE = "db"
    with django_capture_on_commit_callbacks(execute=True):
        assert main(["move-raw-uploads"]) == 0

    assert in_files == [(name_of(s, p), 0) for s, p in zip(sessions, SAMPLES, strict=True)]
    assert files_read == expected
    assert [where(s) for s in sessions] == [("", len(data)) for data in expected]
    assert downloads(api, sessions) == expected
    assert not [path for path in raw_dir.rglob("*") if path.is_file()]  # moved back: the files are gone
    out = capsys.readouterr().out.splitlines()
    pairs = list(zip(sessions, [f"{len(data):,}" for data in expected], strict=True))
    assert out == [
        *(f"would move the raw upload of session {s.pk} ({n} bytes) to file" for s, n in pairs),
        f"would move 2 raw uploads ({sum(map(len, expected)):,} bytes); 0 could not move",
        *(f"moved the raw upload of session {s.pk} ({n} bytes) to file" for s, n in pairs),
        f"moved 2 raw uploads ({sum(map(len, expected)):,} bytes); 0 could not move",
        "moved 0 raw uploads (0 bytes); 0 could not move",
        *(f"moved the raw upload of session {s.pk} ({n} bytes) to the database" for s, n in pairs),
        f"moved 2 raw uploads ({sum(map(len, expected)):,} bytes); 0 could not move",
    ]  # fmt: skip


@pytest.mark.django_db
def test_a_copy_that_does_not_read_back_intact_is_not_moved(database, settings, raw_dir, user, capsys):
    settings.LOOPGUARD_RAW_STORAGE = "file"
    damaged, intact = imported(user)
    (raw_dir / name_of(damaged, SAMPLES[0])).write_bytes(b"bit rot")
    settings.LOOPGUARD_RAW_STORAGE = "db"

    assert main(["move-raw-uploads"]) == 1

    assert where(damaged) == (name_of(damaged, SAMPLES[0]), 0)  # still pointing at its file
    assert where(intact) == ("", len(SAMPLES[1].read_bytes()))
    assert capsys.readouterr().err == (
        f"loopguard move-raw-uploads: raw upload of session {damaged.pk}: RawUploadCopyError:"
        f" the stored file {name_of(damaged, SAMPLES[0])} does not hold the upload's bytes (SHA-256 differs)\n"
    )


@pytest.mark.django_db
def test_pruning_a_session_deletes_its_stored_file(
    database, settings, raw_dir, user, django_capture_on_commit_callbacks
):
    settings.LOOPGUARD_RAW_STORAGE = "file"
    old, new = imported(user)
    Session.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(days=31))

    with django_capture_on_commit_callbacks(execute=True):
        assert main(["prune", "--older-than", "30d"]) == 0

    assert sorted(path.relative_to(raw_dir).as_posix() for path in raw_dir.rglob("*") if path.is_file()) == [
        name_of(new, SAMPLES[1])
    ]


@pytest.fixture
def s3_bucket(settings):
    """A bucket on a local S3-compatible server (moto's, over HTTP), as the raw-upload storage."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {
        "bucket_name": "loopguard-raw",
        "endpoint_url": f"http://{host}:{port}",
        "region_name": "us-east-1",
        "access_key": "test-key",
        "secret_key": "test-secret",
        "location": "raw-uploads",
        "file_overwrite": False,
    }
    client = boto3.client(
        "s3", endpoint_url=options["endpoint_url"], region_name="us-east-1",
        aws_access_key_id="test-key", aws_secret_access_key="test-secret",
    )  # fmt: skip
    client.create_bucket(Bucket=options["bucket_name"])
    settings.STORAGES = {
        **settings.STORAGES,
        "raw_uploads": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
    }
    settings.LOOPGUARD_RAW_STORAGE = "s3"
    yield client
    server.stop()


def bucket_keys(client) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket="loopguard-raw").get("Contents", []))


@pytest.mark.django_db
def test_s3_mode_keeps_uploads_in_the_bucket_and_deletes_them_with_their_session(
    s3_bucket, settings, api, user, django_capture_on_commit_callbacks
):
    sessions = imported(user)
    keys = [f"raw-uploads/{name_of(s, p)}" for s, p in zip(sessions, SAMPLES, strict=True)]
    stored = [s3_bucket.get_object(Bucket="loopguard-raw", Key=key)["Body"].read() for key in keys]
    in_bucket = bucket_keys(s3_bucket)
    rows = [where(s) for s in sessions]
    read = downloads(api, sessions)
    Session.objects.filter(pk=sessions[0].pk).update(created=timezone.now() - timedelta(days=31))
    with django_capture_on_commit_callbacks(execute=True):
        assert main(["prune", "--older-than", "30d"]) == 0
    settings.LOOPGUARD_RAW_STORAGE = "db"
    with django_capture_on_commit_callbacks(execute=True):
        assert main(["move-raw-uploads"]) == 0

    assert in_bucket == sorted(keys)
    assert rows == [(name_of(s, p), 0) for s, p in zip(sessions, SAMPLES, strict=True)]
    assert stored == read == [p.read_bytes() for p in SAMPLES]
    assert not Session.objects.filter(pk=sessions[0].pk).exists()
    assert where(sessions[1]) == ("", len(read[1]))
    assert downloads(api, sessions[1:]) == read[1:]
    assert bucket_keys(s3_bucket) == []  # pruned, then moved back into the database
