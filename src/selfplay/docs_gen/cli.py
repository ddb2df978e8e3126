"""``selfplay docs``: write the generated pages of docs/ (the config reference and the paper
map), or with ``--check`` say which committed ones are out of date."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "docs",
        help="regenerate docs/config-reference.md and docs/paper-map.md",
        description="Generate docs/config-reference.md from the config schemas and docs/paper-map.md from the "
        "workflow (every output of rule all for every shipped config, its rule, script and library "
        "functions); --check only compares them with the files in the checkout.",
    )
    p.add_argument("--repo", default=".", help="the project checkout (default: the current directory)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is not current")
    p.add_argument("--only", choices=("config-reference", "paper-map"), help="one page only (default: both)")
    p.set_defaults(handler=cmd_docs)


def pages(repo: Path, only: str | None = None) -> dict[str, str]:
    """Repository-relative path -> the page's fresh text."""
    from . import config_reference, paper_map

    out: dict[str, str] = {}
    if only in (None, "config-reference"):
        out[config_reference.PAGE] = config_reference.render()
    if only in (None, "paper-map"):
        out[paper_map.PAGE] = paper_map.generate(repo)[0]
    return out


def cmd_docs(args: argparse.Namespace) -> int:
    repo = Path(args.repo)
    start = time.monotonic()
    stale = []
    for rel, text in pages(repo, args.only).items():
        path = repo / rel
        current = path.read_text() if path.exists() else None
        if current == text:
            print(f"{rel}: current")
        elif args.check:
            stale.append(rel)
            print(f"{rel}: out of date (run `selfplay docs`)", file=sys.stderr)
        else:
            path.write_text(text)
            print(f"{rel}: written")
    print(f"({time.monotonic() - start:.1f} s)")
    return 1 if stale else 0
