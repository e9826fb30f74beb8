"""The lab's apps form layers (CONTRIBUTING.md, "The lab's layers"): a
module of `loopguard_site` imports only its own part or parts of lower
layers, never a higher one nor another part of its own layer. Every import
counts, those inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import loopguard_site

# Lowest first. A part is an app (a subpackage) or a top-level module of
# loopguard_site; "__init__" is the package's own module.
LAYERS: list[set[str]] = [
    {
        "__init__",
        "env",
        "celery",
        "channel_layers",
        "daphne_limits",
        "frame_masks",
        "frame_utf8",
        "direct_writes",
        "staticfinders",
        "embedded_worker",
        "storable",
        "errors",  # FieldError, raised by every layer
        "postgresql",
        "formats",
        "templatetags",
    },
    {"text_frames"},  # unmasks with frame_masks' masker
    {"settings", "apps", "faults"},
    {"accounts"},
    {"api", "jobs"},
    {"openapi"},
    {"transcripts"},
    {"replay"},
    {"review"},
    {"profiles"},
    {"timeline"},
    {"live", "overview", "health"},
    {"otlp", "proxy"},
    {"urls", "routing", "demo"},
    {"asgi"},
    {"cli"},
]


def module_name(path: Path, root: Path) -> list[str]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported_modules(node: ast.AST, importer: list[str], is_package: bool) -> list[str]:
    """The dotted names an import statement reaches: `from a.b import c`
    reaches `a.b`; `from a import b` reaches `a.b` (b is a part of package a)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = importer if is_package else importer[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    if "." in module:
        return [module]
    return [f"{module}.{alias.name}" for alias in node.names]


def _is_part(root: Path, name: str) -> bool:
    return (root / name).is_dir() or (root / f"{name}.py").is_file()


def layer_violations(root: Path, layers: list[set[str]]) -> list[str]:
    """One line per import of a module under `root` (a package) that reaches
    a part of `root` in a higher layer or another part of its own layer, and
    per part that no layer names."""
    rank = {part: number for number, layer in enumerate(layers) for part in layer}
    package = root.name
    found = []
    for path in sorted(root.rglob("*.py")):
        importer = module_name(path, root)
        part = importer[1] if len(importer) > 1 else "__init__"
        where = f"{'.'.join(importer)}:"
        if part not in rank:
            found.append(f"{'.'.join(importer)}: {part} is in no layer")
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in imported_modules(node, importer, path.name == "__init__.py"):
                target = name.split(".")
                if target[0] != package or len(target) < 2:
                    continue
                reached = target[1] if _is_part(root, target[1]) else "__init__"
                if reached == part:
                    continue
                if reached not in rank:
                    found.append(f"{where}{node.lineno} imports {name}: {reached} is in no layer")
                elif rank[reached] > rank[part]:
                    found.append(f"{where}{node.lineno} imports {name}: {reached} is above {part}")
                elif rank[reached] == rank[part]:
                    found.append(f"{where}{node.lineno} imports {name}: {reached} is in the layer of {part}")
    return found


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "site"


SYNTHETIC = [{"__init__", "util"}, {"low"}, {"mid", "side"}, {"top"}]


def test_the_checker_passes_imports_of_lower_layers(tmp_path):
    root = write(
        tmp_path,
        {
            "site/__init__.py": "",
            "site/util.py": "import json\n",
            "site/low/__init__.py": "from site import util\n",
            "site/low/models.py": "from . import views\nfrom .views import page\n",
            "site/low/views.py": "",
            "site/mid/services.py": "from site.low.models import Row\nimport site.util\n",
            "site/top/views.py": "from ..mid import services\nfrom site.side import x\n",
            "site/side/__init__.py": "",
        },
    )
    assert layer_violations(root, SYNTHETIC) == []


def test_the_checker_names_module_line_and_import_of_each_wrong_import(tmp_path):
    root = write(
        tmp_path,
        {
            "site/__init__.py": "",
            "site/util.py": "from site.low import models\n",
            "site/low/__init__.py": "",
            "site/low/models.py": "\n\ndef f():\n    from site.mid.services import g\n",
            "site/low/views.py": "import site.top.views\n",
            "site/mid/services.py": "from ..side import helpers\nfrom ..top import views\n",
            "site/side/helpers.py": "",
            "site/top/views.py": "",
            "site/new/views.py": "from site.low import models\n",
        },
    )
    assert layer_violations(root, SYNTHETIC) == [
        "site.low.models:4 imports site.mid.services: mid is above low",
        "site.low.views:1 imports site.top.views: top is above low",
        "site.mid.services:1 imports site.side: side is in the layer of mid",
        "site.mid.services:2 imports site.top: top is above mid",
        "site.new.views: new is in no layer",
        "site.util:1 imports site.low: low is above util",
    ]


def test_the_lab_imports_only_down_its_layers():
    root = Path(loopguard_site.__file__).parent
    assert layer_violations(root, LAYERS) == []


def test_a_wrong_import_added_to_the_lab_is_caught(tmp_path):
    source = Path(loopguard_site.__file__).parent
    copy = tmp_path / "loopguard_site"
    for path in source.rglob("*.py"):
        (copy / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(source)).write_text(path.read_text())
    access = copy / "accounts" / "access.py"
    lines = access.read_text().count("\n")
    access.write_text(access.read_text() + "\n\ndef f():\n    from loopguard_site.transcripts.models import Session\n")
    assert layer_violations(copy, LAYERS) == [
        f"loopguard_site.accounts.access:{lines + 4} imports loopguard_site.transcripts.models:"
        " transcripts is above accounts"
    ]
