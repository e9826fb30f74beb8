"""What a server process has after loading the application, as `daphne
loopguard_site.asgi:application` and `loopguard lab` load it: read in a
fresh interpreter, so nothing the test process did counts."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.shared_paths import REPO_ROOT

LOAD_THE_SERVER = "from daphne.utils import import_by_path; import_by_path('loopguard_site.asgi:application')"


def printed_by_loaded_server(code: str) -> list[str]:
    """The words `code` prints, run after the application is loaded."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "loopguard_site.settings", "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", f"{LOAD_THE_SERVER}\n{code}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.split()
