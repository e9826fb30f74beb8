"""The `loopguard` command line.

Each subcommand is a module with `HELP`, `add_arguments(parser)` and
`run(args) -> int` (the exit status), and optionally `NAME` (the command,
when it is not the module's name: `import` is a Python keyword). Adding a
command is adding its module: every public module of this package is one,
and so is every one of `loopguard_site.cli` (the lab's commands: `lab`,
`import`, `replay`). The lab's modules import Django only inside `run`, so
building the parser loads no Django; without the `lab` extra installed,
running one of them says how to install it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import re
import sys
from types import ModuleType

DISTRIBUTION = "loopguard"
LAB_EXTRA = "lab"
COMMAND_PACKAGES = ("detector.cli", "loopguard_site.cli")


def command_modules() -> dict[str, ModuleType]:
    """Subcommand name -> its module, the detector's commands first."""
    commands: dict[str, ModuleType] = {}
    for package_name in COMMAND_PACKAGES:
        if importlib.util.find_spec(package_name.partition(".")[0]) is None:
            continue  # the lab's package is not installed
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
            if not info.name.startswith("_"):
                module = importlib.import_module(f"{package_name}.{info.name}")
                commands[getattr(module, "NAME", info.name)] = module
    return commands


def missing_lab_requirements() -> list[str]:
    """The distributions of the `lab` extra that are not installed (none
    when LoopGuard itself runs uninstalled, from a checkout)."""
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    missing = []
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        if not re.search(rf"""extra\s*==\s*["']{LAB_EXTRA}["']""", marker):
            continue
        name = re.match(r"[A-Za-z0-9._-]+", spec.strip()).group()
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loopguard", description="Catch LLM loops in streams and agent sessions.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in command_modules().items():
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run, needs_lab=not module.__name__.startswith("detector."))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.needs_lab and (missing := missing_lab_requirements()):
        print(
            f"loopguard {args.command}: the lab is not installed (missing: {', '.join(missing)}); "
            f"install it with: pip install '{DISTRIBUTION}[{LAB_EXTRA}]'",
            file=sys.stderr,
        )
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
