"""The lab uses the detector's public API only: names of `detector.__all__`,
or of the submodules `detector`'s docstring lists as public (their
`__all__` when they have one, else their names without a leading
underscore). Read from the source of every lab module, so a new private
import fails here before it is merged."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import detector
from tests.shared_paths import REPO_ROOT

SITE = REPO_ROOT / "loopguard_site"


def public_modules() -> set[str]:
    """The modules listed under "Public modules" in `detector`'s docstring."""
    section = detector.__doc__.split("Public modules", 1)[1]
    return set(re.findall(r"^- `(detector(?:\.[a-z_]+)+)`", section, re.MULTILINE))


def private_imports(path: Path, public: set[str]) -> list[str]:
    """`file:line: what` for each import of a private detector name in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if a.name.startswith("detector.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "detector":
            if node.module != "detector" and node.module not in public:
                found.append(f"{where}: from {node.module} (not a public module)")
                continue
            module = importlib.import_module(node.module)
            allowed = getattr(module, "__all__", None)
            for alias in node.names:
                if alias.name.startswith("_") or (allowed is not None and alias.name not in allowed):
                    found.append(f"{where}: {alias.name} from {node.module} (not in its public names)")
    return found


def test_the_public_modules_are_documented_and_exist():
    public = public_modules()
    assert {"detector.config", "detector.importers", "detector.params"} <= public
    for name in public:
        importlib.import_module(name)


def test_every_name_of_detector_all_is_there():
    assert all(hasattr(detector, name) for name in detector.__all__)


def test_the_lab_imports_only_public_detector_names():
    public = public_modules()
    found = [
        f"{path.parent.relative_to(REPO_ROOT)}/{line}"
        for path in sorted(SITE.rglob("*.py"))
        for line in private_imports(path, public)
    ]
    assert found == []


def test_the_check_sees_a_private_import(tmp_path):
    public = public_modules()
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from detector.base import StreamContext\n"
        "from detector import Monitor, _private\n"
        "from detector.importers import parse_path, detect\n"
        "import detector.monitor\n"
    )
    lines = [line.split(": ", 1)[1] for line in private_imports(bad, public)]
    assert lines == [
        "from detector.base (not a public module)",
        "_private from detector (not in its public names)",
        "detect from detector.importers (not in its public names)",
        "import detector.monitor",
    ]
