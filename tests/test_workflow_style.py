"""The workflow's own files keep the habits of the model Snakemake workflows.

`snakemake --lint` (no absolute paths, logs on every rule, no mixed rules, params for
the values a job reads ...) must find nothing, and snakefmt must have nothing to change
in the Snakefile and rules/. Each check is shown to fail on a file that breaks it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEFILES = [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]


def snakefmt(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


def lint(snakefile: Path, workdir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--lint",
            "--snakefile",
            str(snakefile),
            "--directory",
            str(workdir),
            "--cores",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def test_snakefmt_leaves_every_workflow_file_unchanged():
    proc = snakefmt(*SNAKEFILES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_check_catches_a_badly_formatted_rule(tmp_path):
    bad = tmp_path / "bad.smk"
    bad.write_text('rule x:\n    output: "a"\n    shell:   "touch {output}"\n')
    assert snakefmt(bad).returncode != 0


def test_snakemake_lint_finds_nothing(tmp_path):
    proc = lint(REPO / "Snakefile", tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Congratulations" in out, out[-4000:]


def test_snakemake_lint_catches_a_rule_without_a_log(tmp_path):
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text('rule x:\n    output:\n        "a",\n    shell:\n        "touch {output}"\n')
    proc = lint(snakefile, tmp_path)
    assert proc.returncode != 0 and "log" in (proc.stdout + proc.stderr).lower()
