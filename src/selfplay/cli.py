"""The ``selfplay`` command line.

Subcommands are registered by the packages that own them (each exposes
``add_parser(subparsers)``), so new ones slot in without touching the others.
Usage problems end with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .errors import UserError


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is a single line instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="selfplay", description="LLM self-play on code with verified rewards.")
    parser.add_argument("--version", action="version", version=f"selfplay {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from .bundle.cli import add_parser as add_bundle
    from .containers.cli import add_parser as add_containers
    from .docs_gen.cli import add_parser as add_docs
    from .plan.cli import add_parser as add_plan
    from .sandbox.cli import add_parser as add_sandbox

    add_sandbox(commands)
    add_bundle(commands)
    add_containers(commands)
    add_plan(commands)
    add_docs(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        sys.stderr.write(f"selfplay: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("selfplay: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
