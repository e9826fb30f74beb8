"""Where the shared material lives: CI clones the repository with `shared/`
beside it (`<repo>/../shared`), as on the development machines."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = (REPO_ROOT / "../shared").resolve()
FORMATS_DIR = SHARED_DIR / "formats"


def shared_path(*parts: str) -> Path:
    """A path under the shared folder, e.g. ``shared_path("formats", "cline")``."""
    return SHARED_DIR.joinpath(*parts)
