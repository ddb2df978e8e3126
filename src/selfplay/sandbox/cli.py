"""``selfplay sandbox ...`` subcommands."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ..errors import UserError


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0) or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sandbox = subparsers.add_parser("sandbox", help="run untrusted Python programs in the sandbox")
    actions = sandbox.add_subparsers(dest="sandbox_command", metavar="COMMAND", required=True)
    run = actions.add_parser(
        "run",
        help="run one function of a file and print one JSON verdict line",
        description="Run FILE's function --entry on the keyword arguments --input inside the "
        "sandbox and print exactly one JSON line: status, value, value_repr, exc_type, "
        "exc_message, seconds, isolation, detail.  Exit status 0 means a verdict was produced.",
    )
    run.add_argument("file", metavar="FILE", help="Python source file defining the entry point")
    run.add_argument("--entry", required=True, metavar="NAME", help="function to call")
    run.add_argument(
        "--input",
        default="{}",
        metavar="JSON",
        help="keyword arguments as a JSON object, e.g. '{\"n\": 3}' (default: {})",
    )
    run.add_argument(
        "--timeout", required=True, type=_positive_float, metavar="SECONDS", help="wall-clock limit"
    )
    run.add_argument(
        "--memory-mb", type=_positive_int, metavar="M", help="address-space limit (default 1024)"
    )
    run.add_argument(
        "--naive",
        action="store_true",
        help="start a fresh interpreter instead of a fork server (same isolation)",
    )
    run.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from . import Sandbox, SandboxLimits, run_naive

    path = Path(args.file)
    try:
        code = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no such file: {args.file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {args.file}: {exc}") from None
    try:
        kwargs = json.loads(args.input)
    except ValueError as exc:
        raise UserError(f"--input is not valid JSON: {exc}") from None
    if not isinstance(kwargs, dict):
        raise UserError("--input must be a JSON object of keyword arguments")
    if not args.entry.isidentifier():
        raise UserError(f"--entry is not a Python identifier: {args.entry!r}")
    limits = SandboxLimits(memory_mb=args.memory_mb) if args.memory_mb else SandboxLimits()
    literal = repr(kwargs)
    if args.naive:
        result = run_naive(code, args.entry, literal, args.timeout, limits)
    else:
        try:
            sandbox = Sandbox(workers=1, limits=limits)
        except RuntimeError as exc:
            sys.stderr.write(f"selfplay: error: {exc}\n")
            return 1
        with sandbox:
            result = sandbox.run(code, args.entry, literal, args.timeout)
    sys.stdout.write(json.dumps(result.to_dict(), sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0
