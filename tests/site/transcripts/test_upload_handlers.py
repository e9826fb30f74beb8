"""A file past the upload limit is dropped as it streams in (later handlers
never get more than the limit of it) and reaches the view as an empty
stand-in of its true size, which the import refuses in its place."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import MemoryFileUploadHandler
from django.http.multipartparser import MultiPartParser
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.upload_handlers import OversizedUpload, UploadLimitHandler

GOOD = b'{"type": "turn"}\n'
BIG = b'{"type": "content", "text": "' + b"x" * 5000 + b'"}\n'


class CountingMemoryHandler(MemoryFileUploadHandler):
    """The usual in-memory handler, counting the bytes it is handed per file."""

    def __init__(self, request=None):
        super().__init__(request)
        self.received: dict[str, int] = {}

    def receive_data_chunk(self, raw_data, start):
        self.received[self.file_name] = self.received.get(self.file_name, 0) + len(raw_data)
        return super().receive_data_chunk(raw_data, start)


def parse(body: bytes, handlers: list) -> dict:
    meta = {"CONTENT_TYPE": MULTIPART_CONTENT, "CONTENT_LENGTH": str(len(body))}
    _, files = MultiPartParser(meta, io.BytesIO(body), handlers, "utf-8").parse()
    return files


def test_a_file_past_the_limit_is_dropped_as_it_streams(settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = 1000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10**6
    body = encode_multipart(
        BOUNDARY, {"file": [SimpleUploadedFile("big.jsonl", BIG), SimpleUploadedFile("ok.jsonl", GOOD)]}
    )
    memory = CountingMemoryHandler()

    files = parse(body, [UploadLimitHandler(), memory])

    big, ok = files.getlist("file")
    assert isinstance(big, OversizedUpload) and (big.name, big.size) == ("big.jsonl", len(BIG))
    assert (ok.name, ok.read()) == ("ok.jsonl", GOOD)
    assert memory.received == {"ok.jsonl": len(GOOD)}  # big.jsonl came in one chunk, past the limit: none of it
    with pytest.raises(ValueError, match="dropped while uploading"):
        big.read()


@pytest.mark.django_db
def test_the_api_answers_the_dropped_file_by_its_true_size(api, settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = 1000
    files = [SimpleUploadedFile("big.jsonl", BIG), SimpleUploadedFile("ok.jsonl", GOOD)]

    response = api.post("/api/sessions", {"file": files})

    assert response.status_code == 201
    assert response.json()["errors"] == [
        {
            "file": "big.jsonl",
            "line": None,
            "field": None,
            "message": f"{len(BIG)} bytes, over the upload limit of 1000 bytes (LOOPGUARD_UPLOAD_MAX_MB)",
        }
    ]
    assert [s.raw_upload.filename for s in Session.objects.all()] == ["ok.jsonl"]


def test_a_file_crossing_the_limit_mid_stream_keeps_only_what_came_before(settings):
    settings.LOOPGUARD_UPLOAD_MAX_BYTES = 2000
    memory = CountingMemoryHandler()
    memory.chunk_size = 256  # the parser reads in the smallest chunk size of its handlers
    body = encode_multipart(BOUNDARY, {"file": [SimpleUploadedFile("big.jsonl", BIG)]})

    (big,) = parse(body, [UploadLimitHandler(), memory]).getlist("file")

    assert (type(big), big.size) == (OversizedUpload, len(BIG))
    # chunk sizes are the parser's (its first chunk holds what follows the headers): the bound is what counts
    assert 0 < memory.received["big.jsonl"] <= 2000
