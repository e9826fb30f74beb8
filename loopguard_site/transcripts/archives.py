"""Zip uploads expanded into their member files, defended against zip bombs
and paths that climb out of the archive.

Limits are checked twice: first from the zip's central directory (member
count, declared sizes, compression ratio), then while each member is read,
because the directory can lie. Nothing is ever written to disk; a member
path is only a name, but one that climbs out (`../x`, `/etc/x`, `C:\\x`) is
refused so that no later consumer could be tricked by it.
"""

from __future__ import annotations

import io
import lzma
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from detector.importers import TranscriptError

ZIP_MAGIC = b"PK\x03\x04"
_READ_CHUNK = 1 << 20
_RATIO_MIN_SIZE = 1 << 20  # small members compress oddly; judge the ratio only above 1 MiB
# what zipfile and its decompressors raise for a damaged or unsupported archive
_CORRUPT = (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError, OSError, zlib.error, lzma.LZMAError)


@dataclass(frozen=True)
class ZipLimits:
    member_bytes: int  # largest member, uncompressed
    total_bytes: int  # all members together, uncompressed
    members: int = 1000  # files in one archive
    ratio: int = 200  # uncompressed / compressed size of one member


def is_zip(data: bytes) -> bool:
    return data.startswith(ZIP_MAGIC)


def member_name(archive: str, member: str) -> str:
    """How a member is named in messages: ``bundle.zip:logs/a.jsonl``."""
    return f"{archive}:{member}"


def _climbs_out(name: str) -> bool:
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return True
    return ".." in PurePosixPath(name.replace("\\", "/")).parts


def zip_members(data: bytes, archive: str, limits: ZipLimits) -> Iterator[tuple[str, str, bytes | TranscriptError]]:
    """(name for messages, member path, its bytes or the error that refused
    it) for each file of the zip `data`, in archive order. An archive that
    cannot be read at all, or breaks a whole-archive limit, is one error
    named `archive` (its member path "")."""
    try:
        archive_file = zipfile.ZipFile(io.BytesIO(data))
        infos = [info for info in archive_file.infolist() if not info.is_dir()]
    except _CORRUPT as exc:
        yield archive, "", TranscriptError(f"not a readable zip archive: {exc}", file=archive)
        return
    if len(infos) > limits.members:
        yield (
            archive,
            "",
            TranscriptError(f"zip has {len(infos)} files, over the limit of {limits.members}", file=archive),
        )
        return
    declared = sum(info.file_size for info in infos)
    if declared > limits.total_bytes:
        yield (
            archive,
            "",
            TranscriptError(
                f"zip expands to {declared} bytes, over the limit of {limits.total_bytes} (zip bomb?)", file=archive
            ),
        )
        return
    total = 0
    for info in infos:
        name = member_name(archive, info.filename)
        outcome = _read_member(archive_file, info, name, limits, limits.total_bytes - total)
        if isinstance(outcome, bytes):
            total += len(outcome)
        yield name, info.filename, outcome


def _read_member(
    archive_file: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: ZipLimits, total_left: int
) -> bytes | TranscriptError:
    if _climbs_out(info.filename):
        return TranscriptError("path climbs out of the archive (absolute or '..'); refused", file=name)
    if info.flag_bits & 0x1:
        return TranscriptError("encrypted zip member; not supported", file=name)
    if info.file_size > limits.member_bytes:
        return TranscriptError(
            f"{info.file_size} bytes uncompressed, over the limit of {limits.member_bytes}", file=name
        )
    if info.file_size > _RATIO_MIN_SIZE and info.file_size > limits.ratio * max(info.compress_size, 1):
        return TranscriptError(
            f"compression ratio over {limits.ratio}:1 ({info.compress_size} -> {info.file_size} bytes; zip bomb?)",
            file=name,
        )
    # The directory may understate sizes: count what really comes out.
    allowed = min(limits.member_bytes, total_left, info.file_size)
    chunks: list[bytes] = []
    size = 0
    try:
        with archive_file.open(info) as member:
            while chunk := member.read(_READ_CHUNK):
                size += len(chunk)
                if size > allowed:
                    return TranscriptError(
                        f"expands past its declared {info.file_size} bytes or the upload limits (zip bomb?)", file=name
                    )
                chunks.append(chunk)
    except _CORRUPT as exc:
        return TranscriptError(f"cannot read zip member: {exc}", file=name)
    return b"".join(chunks)
