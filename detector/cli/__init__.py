"""The `loopguard` command line.

Each subcommand is a module with `HELP`, `add_arguments(parser)` and
`run(args) -> int` (the exit status). `lab` and `import` need Django and live
in `loopguard_site.cli`; they are imported only when one of them runs, so the
detector commands work without Django installed.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> module that implements it
COMMANDS = {
    "scan": "detector.cli.scan",
    "eval": "detector.cli.eval",
    "convert": "detector.cli.convert",
    "lab": "loopguard_site.cli.lab",
    "import": "loopguard_site.cli.import_sessions",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loopguard", description="Catch LLM loops in streams and agent sessions.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            if exc.name and module_name.startswith(exc.name.split(".")[0]):
                continue  # the subcommand's module is not written yet / Django is not installed
            raise
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
