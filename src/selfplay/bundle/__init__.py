"""Archival reproduction bundles: one tar.gz that holds everything a run produced
except the model, and re-derives every table from it without a model.

- :mod:`.manifest`  the checksummed list of every file in a bundle, and its check
- :mod:`.pack`      building a bundle (rule ``bundle``, workflow_scripts/bundle.py)
- :mod:`.restore`   putting a bundled training record in place of training
- :mod:`.replay`    ``selfplay bundle replay``: unpack, re-run downstream of generation, compare
- :mod:`.cli`       the ``selfplay bundle`` subcommands

Layout of an unpacked bundle (the top folder is the bundle's name)::

    README.md  bundle.json  MANIFEST.json  SHA256SUMS  config.yaml  report.html
    environment/   python.json, pip-freeze.txt, containers/ (definitions, image references)
    workflow/      the workflow's source (Snakefile, rules, scripts, the selfplay package)
    resources/     the input datasets, at the paths the workflow reads them from
    results/       recordings, verdicts, training sets, training records, tables, figures
    logs/  benchmarks/

Everything below the top folder mirrors the run's working directory, so the folder
itself can serve as ``replay_training_from`` and its recordings as replay files.
"""

BUNDLE_FORMAT = "selfplay-bundle/1"
META_NAME = "bundle.json"


def snakemake_command(snakefile, directory, *args: str) -> list[str]:
    """``python -m snakemake`` on ``snakefile`` in ``directory`` with ``args``: how a
    bundle runs Snakemake (its report, its archive, its replay), under this interpreter."""
    import sys

    return [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(snakefile),
        "--directory",
        str(directory),
        *args,
    ]
