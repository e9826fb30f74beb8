"""Zips: each member is its own file with its own outcome; zip bombs (by
count, declared size, ratio, or a directory that lies) and paths that
climb out of the archive are refused, naming the archive and member."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from loopguard_site.transcripts.archives import ZipLimits, zip_members
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.raw_uploads import raw_upload_read
from loopguard_site.transcripts.services import Upload, sessions_import_upload

GOOD = b'{"type": "session", "model": "m"}\n{"type": "content", "text": "fine"}\n'
OTHER = b'{"type": "turn"}\n{"type": "reasoning", "text": "hmm"}\n{"type": "finish", "reason": "stop"}\n'
LIMITS = ZipLimits(member_bytes=10_000, total_bytes=40_000)


def make_zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return buffer.getvalue()


def lines(outcomes) -> list[str]:
    return [outcome.line() for outcome in outcomes]


@pytest.mark.django_db
def test_every_member_of_a_zip_is_imported_on_its_own(user):
    archive = make_zip({"logs/a.jsonl": GOOD, "logs/deeper/b.jsonl": OTHER, "c.jsonl": b"{oops\n", "empty/": b""})

    outcomes = sessions_import_upload(
        [Upload.from_bytes("bundle.zip", archive), Upload.from_bytes("d.jsonl", GOOD)], uploader=user, tags=["z"]
    )

    a, b, d = Session.objects.order_by("id")
    assert lines(outcomes) == [
        f"imported bundle.zip:logs/a.jsonl: session {a.pk}, 2 events, format events",
        f"imported bundle.zip:logs/deeper/b.jsonl: session {b.pk}, 4 events, format events",
        "error bundle.zip:c.jsonl: line 1: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"imported d.jsonl: session {d.pk}, 2 events, format events",
    ]
    assert [(s.title, s.raw_upload.filename, raw_upload_read(s.raw_upload)) for s in (a, b)] == [
        ("a", "a.jsonl", GOOD),
        ("b", "b.jsonl", OTHER),
    ]
    assert (a.uploader, a.tag_names()) == (user, ["z"])


@pytest.mark.django_db
def test_a_zip_posted_to_the_api_answers_per_member(api):
    archive = make_zip({"a.jsonl": GOOD, "../b.jsonl": GOOD})

    response = api.post("/api/sessions?filename=x.zip", archive, content_type="application/zip")

    session = Session.objects.get()
    assert response.status_code == 201
    assert response.json() == {
        "sessions": [{"id": session.pk, "title": "a", "model": "m", "format": "events", "events": 2}],
        "errors": [
            {
                "file": "x.zip:../b.jsonl",
                "line": None,
                "field": None,
                "message": "path climbs out of the archive (absolute or '..'); refused",
            }
        ],
    }


@pytest.mark.parametrize("name", ["../evil.jsonl", "a/../../evil.jsonl", "/etc/evil.jsonl", "C:\\evil.jsonl", "..\\x"])
def test_paths_that_climb_out_are_refused(name):
    archive = make_zip({name: GOOD, "fine.jsonl": GOOD})

    found = list(zip_members(archive, "up.zip", LIMITS))

    assert [(n, str(m)) for n, _, m in found] == [
        (f"up.zip:{name}", f"up.zip:{name}: path climbs out of the archive (absolute or '..'); refused"),
        ("up.zip:fine.jsonl", str(GOOD)),
    ]


def test_a_member_with_an_extreme_compression_ratio_is_a_zip_bomb():
    bomb = b" " * (2 << 20)  # 2 MiB of spaces deflate to about 2 KiB
    archive = make_zip({"bomb.jsonl": bomb, "fine.jsonl": GOOD})
    info = zipfile.ZipFile(io.BytesIO(archive)).getinfo("bomb.jsonl")
    limits = ZipLimits(member_bytes=10 << 20, total_bytes=40 << 20)

    found = list(zip_members(archive, "up.zip", limits))

    assert [(n, m if isinstance(m, bytes) else str(m)) for n, _, m in found] == [
        (
            "up.zip:bomb.jsonl",
            f"up.zip:bomb.jsonl: compression ratio over 200:1 ({info.compress_size} -> {2 << 20} bytes; zip bomb?)",
        ),
        ("up.zip:fine.jsonl", GOOD),
    ]


def test_a_zip_expanding_past_the_total_limit_is_refused_whole():
    archive = make_zip({f"{n}.jsonl": b"x" * 9_000 for n in range(5)})

    assert [(n, str(m)) for n, _, m in zip_members(archive, "up.zip", LIMITS)] == [
        ("up.zip", "up.zip: zip expands to 45000 bytes, over the limit of 40000 (zip bomb?)")
    ]


def test_a_member_over_the_file_limit_is_refused():
    archive = make_zip({"big.jsonl": b"x" * 10_001, "fine.jsonl": GOOD})

    assert [(n, m if isinstance(m, bytes) else str(m)) for n, _, m in zip_members(archive, "up.zip", LIMITS)] == [
        ("up.zip:big.jsonl", "up.zip:big.jsonl: 10001 bytes uncompressed, over the limit of 10000"),
        ("up.zip:fine.jsonl", GOOD),
    ]


def test_too_many_members_is_refused_whole():
    archive = make_zip({f"{n}.jsonl": b"" for n in range(4)})

    found = list(zip_members(archive, "up.zip", ZipLimits(member_bytes=10, total_bytes=10, members=3)))

    assert [(n, str(m)) for n, _, m in found] == [("up.zip", "up.zip: zip has 4 files, over the limit of 3")]


def _understate_size(archive: bytes, declared: int) -> bytes:
    """The zip with its one member's uncompressed size rewritten, in the
    local header and the central directory, to `declared`."""
    data = bytearray(archive)
    local = data.index(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, declared)
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, declared)
    return bytes(data)


def test_a_directory_that_understates_a_size_does_not_let_more_out():
    archive = _understate_size(make_zip({"a.jsonl": b"y" * 5_000}), 100)

    found = list(zip_members(archive, "up.zip", LIMITS))

    assert [(n, str(m)) for n, _, m in found] == [
        ("up.zip:a.jsonl", "up.zip:a.jsonl: cannot read zip member: Bad CRC-32 for file 'a.jsonl'")
    ]


def test_an_encrypted_member_is_refused():
    data = bytearray(make_zip({"a.jsonl": GOOD}))
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1  # general purpose flag: encrypted

    assert [(n, str(m)) for n, _, m in zip_members(bytes(data), "up.zip", LIMITS)] == [
        ("up.zip:a.jsonl", "up.zip:a.jsonl: encrypted zip member; not supported")
    ]


@pytest.mark.django_db
def test_a_nested_zip_and_a_broken_zip_are_errors():
    inner = make_zip({"a.jsonl": GOOD})
    outer = make_zip({"inner.zip": inner}, zipfile.ZIP_STORED)

    outcomes = sessions_import_upload(
        [Upload.from_bytes("outer.zip", outer), Upload.from_bytes("broken.zip", b"PK\x03\x04" + b"\x00" * 40)]
    )

    assert lines(outcomes) == [
        "error outer.zip:inner.zip: a zip inside a zip is not expanded",
        "error broken.zip: not a readable zip archive: File is not a zip file",
    ]
    assert Session.objects.count() == 0
