"""``selfplay containers ...`` subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    containers = subparsers.add_parser("containers", help="check and list the pinned container images")
    actions = containers.add_subparsers(dest="containers_command", metavar="COMMAND", required=True)
    check = actions.add_parser(
        "check",
        help="check that every containers/*.def pins what it installs and matches images.yaml",
        description="Exit 0 when every definition pins its base image by digest, its downloads by "
        "sha256 and its packages by exact version, and containers/images.yaml agrees with them; "
        "otherwise print one line per problem and exit 1.",
    )
    check.add_argument("--repo", default=".", help="the project checkout (default: the current directory)")
    check.set_defaults(handler=cmd_check)
    show = actions.add_parser("list", help="print each image's name, version, definition and reference")
    show.add_argument("--repo", default=".", help="the project checkout (default: the current directory)")
    show.set_defaults(handler=cmd_list)


def cmd_check(args: argparse.Namespace) -> int:
    from .deffile import check_pinning, read_def
    from .registry import registry_problems

    repo = Path(args.repo)
    defs = sorted((repo / "containers").glob("*.def"))
    if not defs:
        raise UserError(f"no container definitions under {repo / 'containers'}")
    problems = [f"{d.relative_to(repo)}: {p}" for d in defs for p in check_pinning(read_def(d), repo)]
    problems += registry_problems(repo)
    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"{len(defs)} definitions pinned; containers/images.yaml agrees with them")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from .registry import load_images

    for image in load_images(Path(args.repo)).values():
        sys.stdout.write(f"{image.name}\t{image.version}\t{image.definition}\t{image.ref}\n")
    return 0
