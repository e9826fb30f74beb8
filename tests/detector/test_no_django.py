"""The detector library is pure Python: importing it (every module of it,
and the `loopguard` command line with its subcommands registered) loads no
Django module. Checked in a fresh interpreter, since the test run itself has
Django loaded."""

from __future__ import annotations

import subprocess
import sys

from tests.shared_paths import REPO_ROOT

CHECK = """
import importlib, pkgutil, sys
import detector
{extra}
loaded = sorted(name for name in sys.modules if name == "django" or name.startswith("django."))
print(",".join(loaded))
"""


def _django_modules_after(extra: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", CHECK.format(extra=extra)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_detector_loads_no_django():
    assert _django_modules_after("") == ""


def test_every_detector_module_loads_no_django():
    extra = "for m in pkgutil.walk_packages(detector.__path__, 'detector.'): importlib.import_module(m.name)"
    assert _django_modules_after(extra) == ""


def test_loopguard_command_line_parser_loads_no_django():
    extra = "from detector.cli import build_parser; build_parser().parse_args(['scan', 'x.jsonl'])"
    assert _django_modules_after(extra) == ""


def test_the_check_would_see_django():
    assert _django_modules_after("import django.conf").startswith("django,django.conf,")
