"""The ``selfplay sandbox run`` command line, through the real console script and ``-m``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIB = """\
def fib(n):
    if n == 0 or n == 1:
        return n
    return fib(n - 1) + fib(n - 2)
"""


def console_script() -> list[str]:
    exe = Path(sys.executable).with_name("selfplay")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("selfplay")
    if found is None:
        pytest.skip("console script 'selfplay' is not installed")
    return [found]


def call(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(FIB)
    return path


def single_json_line(out: str) -> dict:
    lines = out.splitlines()
    assert len(lines) == 1, out
    return json.loads(lines[0])


def test_console_script_ok(program):
    done = call(
        console_script()
        + ["sandbox", "run", str(program), "--entry", "fib", "--input", '{"n": 10}', "--timeout", "5"]
    )
    assert done.returncode == 0, done.stderr
    verdict = single_json_line(done.stdout)
    assert verdict["status"] == "ok"
    assert verdict["value"] == ["int", 55] and verdict["value_repr"] == "55"
    assert verdict["seconds"] < 5
    assert verdict["isolation"]["env"] == "scrubbed"
    assert verdict["isolation"]["mode"] == "forkserver"


def test_module_entry_exception_and_naive(program):
    done = call(
        [
            sys.executable,
            "-m",
            "selfplay",
            "sandbox",
            "run",
            str(program),
            "--entry",
            "fib",
            "--input",
            '{"n": -1}',
            "--timeout",
            "5",
            "--memory-mb",
            "512",
            "--naive",
        ]
    )
    assert done.returncode == 0, done.stderr
    verdict = single_json_line(done.stdout)
    assert (verdict["status"], verdict["exc_type"]) == ("exception", "RecursionError")
    assert verdict["isolation"]["mode"] == "naive"
    assert verdict["isolation"]["rlimits"]["as_mb"] == 512


def test_timeout_and_error_verdicts_exit_zero(tmp_path):
    loop = tmp_path / "loop.py"
    loop.write_text("def spin(n):\n    while True:\n        pass\n")
    done = call(
        [
            sys.executable,
            "-m",
            "selfplay",
            "sandbox",
            "run",
            str(loop),
            "--entry",
            "spin",
            "--input",
            '{"n": 1}',
            "--timeout",
            "0.3",
        ]
    )
    assert done.returncode == 0
    assert single_json_line(done.stdout)["status"] == "timeout"
    done = call(
        [
            sys.executable,
            "-m",
            "selfplay",
            "sandbox",
            "run",
            str(loop),
            "--entry",
            "spin",
            "--input",
            '{"m": 1}',
            "--timeout",
            "1",
        ]
    )
    assert done.returncode == 0
    verdict = single_json_line(done.stdout)
    assert verdict["status"] == "error" and "bind" in verdict["detail"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--entry", "fib", "--timeout", "0"],
        ["--entry", "fib", "--timeout", "abc"],
        ["--entry", "fib", "--timeout", "1", "--input", "{not json"],
        ["--entry", "fib", "--timeout", "1", "--input", "[1, 2]"],
        ["--entry", "fib"],
        ["--timeout", "1"],
        ["--entry", "fib", "--timeout", "1", "--memory-mb", "-5"],
    ],
)
def test_usage_errors_are_one_line(program, extra):
    done = call([sys.executable, "-m", "selfplay", "sandbox", "run", str(program), *extra])
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_is_a_usage_error(tmp_path):
    done = call(
        [
            sys.executable,
            "-m",
            "selfplay",
            "sandbox",
            "run",
            str(tmp_path / "absent.py"),
            "--entry",
            "f",
            "--timeout",
            "1",
        ]
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no such file" in done.stderr


def test_no_command_is_a_usage_error():
    done = call([sys.executable, "-m", "selfplay"])
    assert done.returncode == 2 and "Traceback" not in done.stderr
