"""Raw uploads: keeping one where LOOPGUARD_RAW_STORAGE says (the database,
or the raw-upload storage: files or an S3-compatible bucket), reading one
back from wherever it is, moving the stored ones to where the setting keeps
new ones, and removing a stored file once its row is deleted.

A row with a `file` name is read from the storage, any other from
`content`: a row is readable before, during and after a move, which
changes one row at a time, and only after its copy was read back intact.
The storage is looked up at each use (`raw_upload_storage`), not taken
from the model field, which fixes one when the model class is made.

In the database an upload is kept compressed (zlib level 1: a 14 MB JSON
Lines file in 0.03 s of the importer's CPU, to a few percent of its size;
sent as it was, the server spent 0.28 s of CPU reading its hex text and
compressing it itself). Rows stored before that (`content_encoding` "")
read as they are.
"""

from __future__ import annotations

import hashlib
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import RawUpload, Session, raw_upload_storage

log = logging.getLogger(__name__)

MOVE_BATCH = 100  # rows listed per query while moving (their bytes are read one at a time)


def raw_upload_name(session_id: int, sha256: str) -> str:
    """The storage name of a session's raw upload."""
    return f"{session_id}/{sha256}"


def raw_upload_create(*, session: Session, filename: str, raw: bytes) -> RawUpload:
    """Keep the upload of a new session where LOOPGUARD_RAW_STORAGE says
    (inside the caller's transaction). The file is written before the row:
    a transaction that rolls back leaves an unreferenced file behind, never a
    row without its bytes."""
    upload = RawUpload(session=session, filename=filename, size=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    if settings.LOOPGUARD_RAW_STORAGE == "db":
        upload.content, upload.content_encoding = _compressed(raw)
    else:
        upload.file.name = raw_upload_storage().save(raw_upload_name(session.pk, upload.sha256), ContentFile(raw))
    upload.save()
    return upload


def raw_upload_read(upload: RawUpload) -> bytes:
    """The upload's bytes, from the storage or the database."""
    if upload.file:
        with raw_upload_storage().open(upload.file.name, "rb") as stored:
            return stored.read()
    return _content(upload)


def _compressed(raw: bytes) -> tuple[bytes, str]:
    """`content` and `content_encoding` of a row that keeps `raw`."""
    return zlib.compress(raw, 1), RawUpload.Encoding.ZLIB


def _content(upload: RawUpload) -> bytes:
    """The upload's bytes from its row's `content`."""
    content = bytes(upload.content)
    return zlib.decompress(content) if upload.content_encoding == RawUpload.Encoding.ZLIB else content


@dataclass
class MoveOutcome:
    """What `raw_uploads_move` did (or, dry, would do)."""

    moved: int = 0
    bytes: int = 0
    errors: list[str] = field(default_factory=list)


def raw_uploads_move(*, dry_run: bool = False, report: Callable[[str], None] = log.info) -> MoveOutcome:
    """Move every raw upload not kept where LOOPGUARD_RAW_STORAGE keeps new
        ones: into the storage (file, s3) or back into the database (db). Each
        row moves in a transaction of its own once its copy was read back with
        the right SHA-256; a row that cannot move is reported and stays readable
        where it was, named in `errors`. `report` gets one line per row moved (or
    to move)."""
    to_database = settings.LOOPGUARD_RAW_STORAGE == "db"
    outcome = MoveOutcome()
    rows = RawUpload.objects.filter(file="") if not to_database else RawUpload.objects.exclude(file="")
    after = 0
    while batch := list(rows.filter(pk__gt=after).order_by("pk").values_list("pk", "session_id", "size")[:MOVE_BATCH]):
        after = batch[-1][0]
        for pk, session_id, size in batch:
            where = "the database" if to_database else settings.LOOPGUARD_RAW_STORAGE
            if not dry_run:
                try:
                    (_move_to_database if to_database else _move_to_storage)(pk)
                except Exception as exc:  # noqa: BLE001 - this row stays where it was; the others go on
                    outcome.errors.append(f"raw upload of session {session_id}: {type(exc).__name__}: {exc}")
                    continue
            outcome.moved += 1
            outcome.bytes += size
            done = "would move" if dry_run else "moved"
            report(f"{done} the raw upload of session {session_id} ({size:,} bytes) to {where}")
    return outcome


class RawUploadCopyError(RuntimeError):
    """A copy that did not read back as the upload's bytes."""


def _checked(upload: RawUpload, data: bytes, where: str) -> bytes:
    if hashlib.sha256(data).hexdigest() != upload.sha256:
        raise RawUploadCopyError(f"{where} does not hold the upload's bytes (SHA-256 differs)")
    return data


def _move_to_storage(pk: int) -> None:
    upload = RawUpload.objects.get(pk=pk)
    data = _checked(upload, _content(upload), "the database row")
    storage = raw_upload_storage()
    name = storage.save(raw_upload_name(upload.session_id, upload.sha256), ContentFile(data))
    with storage.open(name, "rb") as copy:
        _checked(upload, copy.read(), f"the stored copy {name}")
    if not RawUpload.objects.filter(pk=pk, file="").update(file=name, content=b"", content_encoding=""):
        storage.delete(name)  # moved meanwhile by another run: drop our copy


def _move_to_database(pk: int) -> None:
    upload = RawUpload.objects.defer("content").get(pk=pk)
    name = upload.file.name
    data = _checked(upload, raw_upload_read(upload), f"the stored file {name}")
    content, encoding = _compressed(data)
    with transaction.atomic():
        if RawUpload.objects.filter(pk=pk, file=name).update(content=content, content_encoding=encoding, file=""):
            transaction.on_commit(lambda: raw_upload_storage().delete(name))


@receiver(post_delete, sender=RawUpload)
def _stored_file_delete(sender, instance: RawUpload, **kwargs) -> None:
    """A deleted row's stored file goes once the deletion is committed."""
    name = instance.file.name if instance.file else ""
    if name:
        transaction.on_commit(lambda: _storage_delete(name))


def _storage_delete(name: str) -> None:
    try:
        raw_upload_storage().delete(name)
    except Exception:  # noqa: BLE001 - the row is gone already: an orphan file, logged
        log.warning("raw upload file %s not deleted", name, exc_info=True)
