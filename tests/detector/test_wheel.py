"""The detector installs alone: the wheel built from this checkout goes into
an empty virtual environment with no network and no index (so any
dependency it declared would fail the install), Django is not there, and
`loopguard scan` finds the loop in a sample exactly as in this process; the
lab's commands say how to install the lab. The same wheel, given the lab's
dependencies, serves the lab's pages, static files and demo sessions from
inside the package (no checkout beside it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from detector.cli import main
from tests.shared_paths import REPO_ROOT

SAMPLE = REPO_ROOT / "fixtures" / "demo" / "loop-content-numbered-agile.jsonl"
SOURCES = ("pyproject.toml", "setup.py", "README.md", "detector", "loopguard_site", "templates", "static", "fixtures")


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    # No PYTHONPATH and another folder: the checkout is not importable from there.
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A virtual environment holding only the wheel (and pip)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: the build writes build/ and *.egg-info beside the sources
    for name in SOURCES:
        path = REPO_ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(path, source / name)
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", root / "dist", source, cwd=root
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("loopguard-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/METADATA").decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires and all("extra ==" in line for line in requires), requires
    made = run(sys.executable, "-m", "venv", root / "env", cwd=root)
    assert made.returncode == 0, made.stderr
    env = root / "env"
    install = run(env / "bin" / "python", "-m", "pip", "install", "--no-index", wheel, cwd=root)
    assert install.returncode == 0, install.stderr
    return env


def site_packages(env: Path) -> Path:
    (found,) = env.glob("lib/python3*/site-packages")
    return found


def test_the_wheel_installs_without_django_and_scans(installed, capsys):
    no_django = run(installed / "bin" / "python", "-c", "import django", cwd=installed)
    assert "No module named 'django'" in no_django.stderr
    scanned = run(installed / "bin" / "loopguard", "scan", SAMPLE, "--json", cwd=installed)
    assert main(["scan", str(SAMPLE), "--json"]) == 1
    here = json.loads(capsys.readouterr().out)
    assert (scanned.returncode, scanned.stderr) == (1, "")
    assert json.loads(scanned.stdout) == here
    assert [d["detector"] for d in here["detections"]] == ["text_loop"]


@pytest.mark.parametrize("command", [["lab", "--demo"], ["import", "x.jsonl"], ["replay", "--all"]])
def test_the_lab_commands_say_how_to_install_the_lab(installed, command):
    result = run(installed / "bin" / "loopguard", *command, cwd=installed)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"loopguard {command[0]}: the lab is not installed (missing: Django, " in result.stderr
    assert result.stderr.rstrip().endswith("install it with: pip install 'loopguard[lab]'")


LAB_PAGE_CHECK = """
import django, json, sys
from pathlib import Path
django.setup()
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client
import loopguard_site
from loopguard_site import demo
call_command("migrate", verbosity=0)
page = Client(HTTP_HOST="localhost").get("/accounts/login/")
print(json.dumps({
    "package": loopguard_site.__file__,
    "login": [page.status_code, b'<link rel="stylesheet"' in page.content],
    "stylesheet": finders.find("css/loopguard.css"),
    "demo": sorted(path.name for path in demo.DEMO_DIR.glob("*.jsonl")),
    "data_dir": str(settings.DATA_DIR),
}))
"""


def test_the_wheel_carries_the_labs_templates_static_files_and_demo(installed, tmp_path):
    packaged = site_packages(installed) / "loopguard_site"
    for folder, inside in (("templates", "templates"), ("static", "static"), ("fixtures/demo", "fixtures/demo")):
        in_checkout = sorted(p.relative_to(REPO_ROOT / folder) for p in (REPO_ROOT / folder).rglob("*") if p.is_file())
        in_wheel = sorted(p.relative_to(packaged / inside) for p in (packaged / inside).rglob("*") if p.is_file())
        assert in_wheel == in_checkout, folder
    # This process's interpreter has the lab's dependencies; the wheel's package
    # comes first on the path, and no checkout is beside it.
    result = subprocess.run(
        [sys.executable, "-c", LAB_PAGE_CHECK],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site_packages(installed)),
            "DJANGO_SETTINGS_MODULE": "loopguard_site.settings",
            "HOME": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["package"] == str(packaged / "__init__.py")
    assert found["login"] == [200, True]
    assert found["stylesheet"] == str(packaged / "static" / "css" / "loopguard.css")
    assert found["demo"] == sorted(p.name for p in (REPO_ROOT / "fixtures" / "demo").glob("*.jsonl"))
    assert found["data_dir"] == str(tmp_path / ".loopguard")
