"""``selfplay plan``: what a config would submit and what it costs (selfplay.plan.estimate),
after the start-of-workflow checks (the GPU memory check among them) pass."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plan",
        help="dry-run a config: jobs per rule, GPU- and CPU-hours, the paper's budget",
        description="Plan the workflow with `snakemake -n` in an empty folder and print, per rule, the jobs, "
        "GPUs per job, GPU- and CPU-hours asked (time limits) and, for benchmark generation, GPU-hours "
        "from token counts; then the paper's stated budget.",
    )
    p.add_argument("--configfile", nargs="+", required=True, help="config files, merged left to right")
    p.add_argument("--repo", default=".", help="the project checkout (default: the current directory)")
    p.set_defaults(handler=cmd_plan)


def cmd_plan(args: argparse.Namespace) -> int:
    from .estimate import plan

    _, text = plan(list(args.configfile), args.repo)
    print(text)
    return 0
