"""The `loopguard` command line.

Each subcommand is a module with `HELP`, `add_arguments(parser)` and
`run(args) -> int` (the exit status). `lab` and `import` need Django and live
in `loopguard_site.cli`; those modules import Django only inside `run`, so
building the parser (and every detector command) loads no Django.
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
    "replay": "loopguard_site.cli.replay",
    "prune": "loopguard_site.cli.prune",
    "move-raw-uploads": "loopguard_site.cli.move_raw_uploads",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loopguard", description="Catch LLM loops in streams and agent sessions.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
