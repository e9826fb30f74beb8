"""`loopguard import PATH...`: one outcome line per file (directories walked,
zips expanded), exit 0 all imported, 1 some failed, 2 usage."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile

import pytest

from detector.cli import main
from loopguard_site.transcripts.models import Session
from tests.shared_paths import FORMATS_DIR, REPO_ROOT

GOOD = b'{"type": "session", "model": "m"}\n{"type": "content", "text": "fine"}\n'


def session_ids() -> list[int]:
    return list(Session.objects.order_by("id").values_list("id", flat=True))


@pytest.mark.django_db
def test_a_directory_tree_and_a_zip_each_file_one_line(tmp_path, capsys, user):
    (tmp_path / "sub" / ".hidden").mkdir(parents=True)
    (tmp_path / "a.jsonl").write_bytes(GOOD)
    (tmp_path / "sub" / "b.jsonl").write_bytes(b"not json\n")
    (tmp_path / "sub" / ".hidden" / "c.jsonl").write_bytes(GOOD)
    (tmp_path / ".dotfile").write_bytes(GOOD)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("in/zip.jsonl", GOOD)
        archive.writestr("../out.jsonl", GOOD)
    (tmp_path / "sub" / "bundle.zip").write_bytes(buffer.getvalue())

    status = main(["import", str(tmp_path), "--tag", "cli", "--tag", "x,y", "--title", "T", "--user", "alice"])

    first, second = session_ids()
    root = str(tmp_path)
    assert capsys.readouterr().out.splitlines() == [
        f"imported {root}/a.jsonl: session {first}, 2 events, format events",
        f"error {root}/sub/b.jsonl: could not tell the format; name it with --format "
        "(tried: events, openai, anthropic, claude-code, codex, gemini-cli, cline, otel)",
        f"imported {root}/sub/bundle.zip:in/zip.jsonl: session {second}, 2 events, format events",
        f"error {root}/sub/bundle.zip:../out.jsonl: path climbs out of the archive (absolute or '..'); refused",
    ]
    assert status == 1
    session = Session.objects.get(pk=first)
    assert (session.title, session.tag_names(), session.uploader) == ("T", ["cli", "x", "y"], user)


@pytest.mark.django_db
def test_every_sample_with_its_format_named_exits_0(capsys):
    paths = sorted(str(p) for p in FORMATS_DIR.glob("openai_stream/*"))

    status = main(["import", *paths, "--format", "openai"])

    (session_id,) = session_ids()
    assert capsys.readouterr().out == f"imported {paths[0]}: session {session_id}, 21 events, format openai\n"
    assert status == 0


@pytest.mark.django_db
def test_a_missing_path_is_an_error_line(tmp_path, capsys):
    (tmp_path / "a.jsonl").write_bytes(GOOD)

    status = main(["import", str(tmp_path / "a.jsonl"), str(tmp_path / "gone.jsonl")])

    assert (
        capsys.readouterr().out.splitlines()[1]
        == f"error {tmp_path}/gone.jsonl: cannot read: No such file or directory"
    )
    assert status == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "nobody"], "loopguard import: --user: no user 'nobody'\n"),
        (["--tag", "t" * 51], "loopguard import: --tag: tag 'tttttttttttttttttttt'... is longer than 50 characters\n"),
    ],
)
def test_usage_errors_exit_2_and_import_nothing(tmp_path, capsys, args, message):
    (tmp_path / "a.jsonl").write_bytes(GOOD)

    status = main(["import", str(tmp_path), *args])

    assert (status, capsys.readouterr().err, Session.objects.count()) == (2, message, 0)


@pytest.mark.django_db
def test_an_empty_directory_exits_2(tmp_path, capsys):
    status = main(["import", str(tmp_path)])

    assert (status, capsys.readouterr().err) == (2, f"loopguard import: no files found under {tmp_path}\n")


@pytest.mark.parametrize("args", [[], ["x.jsonl", "--format", "yaml"]])
def test_bad_arguments_exit_2(args):
    with pytest.raises(SystemExit) as exited:
        main(["import", *args])

    assert exited.value.code == 2


def test_the_command_module_imports_django_only_when_it_runs():
    code = "import sys, loopguard_site.cli.import_sessions; print([m for m in sys.modules if m.startswith('django')])"

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT)

    assert result.stdout == "[]\n"
