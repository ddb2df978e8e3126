"""The Python files pass ruff's linter and formatter under the settings in pyproject.toml.

`make test` runs these beside snakefmt and `snakemake --lint` (tests/test_workflow_style.py).
To fix what they report: `.venv/bin/ruff check --fix . && .venv/bin/ruff format .`.
Each check is also shown to fail on a file that breaks it, so a settings change that
silently excludes everything cannot pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        input=stdin,
    )


def test_the_python_files_pass_the_linter():
    proc = ruff("check", "--no-fix", "--output-format", "concise", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_python_files_are_formatted():
    proc = ruff("format", "--check", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_linter_checks_library_code_with_the_projects_rules():
    # an unused import and a loop variable the closure reads late, in a library module's path
    bad = "import os\n\n\ndef f(xs):\n    return [lambda: x for x in xs]\n"
    proc = ruff("check", "--no-fix", "--stdin-filename", "src/selfplay/example.py", "-", stdin=bad)
    assert proc.returncode == 1
    assert "F401" in proc.stdout and "B023" in proc.stdout


def test_the_formatter_checks_the_projects_line_length():
    line = "x = [" + ", ".join(f"'{i:03d}'" for i in range(25)) + "]\n"  # 130 characters
    assert len(line) > 110
    proc = ruff("format", "--check", "--stdin-filename", "src/selfplay/example.py", "-", stdin=line)
    assert proc.returncode == 1
    short = "x = 1\n"
    assert (
        ruff("format", "--check", "--stdin-filename", "src/selfplay/example.py", "-", stdin=short).returncode
        == 0
    )


def test_workflow_scripts_may_use_the_injected_snakemake_object_but_nothing_else_undefined():
    ok = "print(snakemake.input[0])\n"
    bad = "print(snakemake.input[0], undefined_name)\n"
    path = "workflow_scripts/example.py"
    assert ruff("check", "--no-fix", "--stdin-filename", path, "-", stdin=ok).returncode == 0
    proc = ruff("check", "--no-fix", "--stdin-filename", path, "-", stdin=bad)
    assert proc.returncode == 1 and "undefined_name" in proc.stdout
