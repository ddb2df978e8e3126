"""``selfplay bundle ...`` subcommands: verify a bundle, replay it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .manifest import BundleCheckError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    bundle = subparsers.add_parser("bundle", help="check or replay a reproduction bundle (snakemake bundle)")
    actions = bundle.add_subparsers(dest="bundle_command", metavar="COMMAND", required=True)

    verify = actions.add_parser(
        "verify",
        help="check every file of a bundle against its manifest",
        description="Check every file of BUNDLE (a .tar.gz or an unpacked folder) against MANIFEST.json: "
        "size and sha256, nothing missing, nothing extra. Exit status 0 when all match, 1 (with one line "
        "naming the first bad file) when not.",
    )
    verify.add_argument(
        "bundle", metavar="BUNDLE", help="results/bundle/<name>.tar.gz or its unpacked folder"
    )
    verify.set_defaults(handler=cmd_verify)

    replay = actions.add_parser(
        "replay",
        help="re-derive a bundle's tables without a model and compare them byte for byte",
        description="Unpack BUNDLE into --out, check its manifest, re-run every step after generation with the "
        "replay backend on the bundled recordings (training restored from the bundled records, no model, no "
        "GPU), and compare the re-derived tables with the bundled ones byte for byte. Exit status 0 when "
        "everything matches, 1 when something differs or the bundle fails its manifest check, 2 when the "
        "replay run itself fails.",
    )
    replay.add_argument(
        "bundle", metavar="BUNDLE", help="results/bundle/<name>.tar.gz or its unpacked folder"
    )
    replay.add_argument("--out", required=True, metavar="DIR", help="new or empty folder for the replay")
    replay.add_argument("--cores", default="all", metavar="N", help="Snakemake --cores (default: all)")
    replay.add_argument(
        "--retrain",
        action="store_true",
        help="train the adapters again instead of restoring their records (needs the model)",
    )
    replay.add_argument(
        "--model",
        metavar="PATH",
        help="with --retrain: a local model folder to train from (default: the bundled config's model)",
    )
    replay.add_argument(
        "--snakefile",
        metavar="PATH",
        help="Snakefile to run (default: this project's; the bundle's own copy is workflow/Snakefile)",
    )
    replay.set_defaults(handler=cmd_replay)


def _check_failed(exc: BundleCheckError) -> int:
    sys.stderr.write(f"selfplay: {exc}\n")
    return 1


def cmd_verify(args: argparse.Namespace) -> int:
    from .replay import verify_bundle

    with tempfile.TemporaryDirectory(prefix="selfplay-bundle-") as tmp:
        try:
            return verify_bundle(args.bundle, Path(tmp))
        except BundleCheckError as exc:
            return _check_failed(exc)


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import replay_bundle

    try:
        return replay_bundle(
            args.bundle,
            args.out,
            cores=args.cores,
            retrain=args.retrain,
            model=args.model,
            snakefile=args.snakefile,
        )
    except BundleCheckError as exc:
        return _check_failed(exc)
