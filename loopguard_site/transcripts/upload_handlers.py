"""An upload handler that stops keeping a file once it passes the upload limit.

Django bounds a request's form fields (DATA_UPLOAD_MAX_MEMORY_SIZE) but not
its files: a 10 GB file would be written whole to a temporary file before
the import service could refuse it. This handler, first in
FILE_UPLOAD_HANDLERS, passes a file's bytes on to the usual memory and
temporary-file handlers until the file passes LOOPGUARD_UPLOAD_MAX_BYTES,
then drops the rest as it streams by and hands the view an empty stand-in
of the file's true size, which the import service refuses by its size
(with its own outcome line, in its place among the other files).
"""

from __future__ import annotations

import io

from django.conf import settings
from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler


class OversizedUpload(InMemoryUploadedFile):
    """A file dropped for its size: its name and true size, no content."""

    def read(self, *args) -> bytes:
        raise ValueError(f"{self.name}: dropped while uploading, over the upload limit")


class UploadLimitHandler(FileUploadHandler):
    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.oversized = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > settings.LOOPGUARD_UPLOAD_MAX_BYTES:
            self.oversized = True
        return None if self.oversized else raw_data  # None: later handlers never see it

    def file_complete(self, file_size: int) -> InMemoryUploadedFile | None:
        if not self.oversized:
            return None  # the next handler completes the file as usual
        return OversizedUpload(
            io.BytesIO(), self.field_name, self.file_name, self.content_type, file_size, self.charset
        )
