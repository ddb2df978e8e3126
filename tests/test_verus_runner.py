"""The Verus runner and its settings.

Verus cannot be installed here, so these tests start the TEST DOUBLE
tests/fakes/fake_verus.py in its place: the real runner code path runs (the project's
sandbox, a subprocess per file, the driver script, exit code and both streams read
outside the confined process), and the double replays outputs recorded in Verus's
formats (tests/verus_recorded/). A marker comment ``FAKE_VERUS: <case>`` in a file
picks the recording.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from selfplay.errors import MissingToolError, UserError
from selfplay.verus import settings as S
from selfplay.verus.runner import FILE_NAME, VerusJob, VerusVerdict, driver_script, verify
from selfplay.verus.settings import VerusSettings, check_verus, sandbox_env, tool_dirs, verus_available

REPO = Path(__file__).resolve().parents[1]
FAKE = REPO / "tests" / "fakes" / "fake_verus.py"
RECORDED = REPO / "tests" / "verus_recorded"
TIMEOUT = 3.0


def fake_settings(**kw) -> VerusSettings:
    base = dict(command=(str(FAKE),), timeout=TIMEOUT, memory_mb=2048, max_processes=64, workers=2)
    base.update(kw)
    return VerusSettings(**base)


def marked(case: str) -> str:
    return f"use vstd::prelude::*;\nverus! {{\n// FAKE_VERUS: {case}\nfn main() {{}}\n}}\n"


@pytest.fixture(scope="module")
def sandbox():
    from selfplay.sandbox import Sandbox, SandboxLimits

    with Sandbox(
        workers=2,
        tool_dirs=tool_dirs(fake_settings()) + [str(RECORDED)],
        limits=SandboxLimits(
            memory_mb=2048, max_processes=64, max_open_files=1024, max_file_mb=64, tmpfs_mb=128
        ),
    ) as sb:
        yield sb


# ------------------------------------------------------------------ settings


def test_settings_defaults_follow_the_released_code():
    s = VerusSettings(command=("verus",))
    assert (s.timeout, s.multiple_errors, s.output_json) == (10.0, 100, True)
    assert s.verus_args("p.rs") == ["p.rs", "--multiple-errors", "100", "--output-json"]
    s = VerusSettings(
        command="verus --crate-type=lib", rlimit=20, output_json=False, extra_args=["--expand-errors"]
    )
    assert s.command == ("verus", "--crate-type=lib")
    assert s.verus_args("p.rs") == ["p.rs", "--multiple-errors", "100", "--rlimit", "20", "--expand-errors"]


def test_settings_command_from_environment(monkeypatch):
    monkeypatch.setenv("SELFPLAY_VERUS", "/opt/verus/verus --some-flag")
    assert VerusSettings().command == ("/opt/verus/verus", "--some-flag")


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": float("inf")}, "timeout must be a positive number"),
        ({"timeout": True}, "timeout must be a positive number"),
        ({"multiple_errors": -1}, "multiple_errors must be an integer >= 0"),
        ({"retries": 11}, "retries must be at most 10"),
        ({"retries": 1.5}, "retries must be an integer"),
        ({"rlimit": 0}, "rlimit must be an integer >= 1"),
        ({"output_json": "yes"}, "output_json must be true or false"),
        ({"memory_mb": 10}, "memory_mb must be an integer >= 256"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"command": ()}, "command must name an executable"),
        ({"command": ""}, "command must name an executable"),
        ({"extra_args": ["-x"]}, "is not of the form --name"),
        ({"extra_args": ["--no-verify"]}, "is not allowed"),
        ({"extra_args": ["--verify-function=foo"]}, "is not allowed"),
        ({"extra_args": ["--rlimit=5"]}, "is not allowed"),
        ({"extra_args": ["--log-all"]}, "is not allowed"),
        ({"env": {"BAD-KEY": "x"}}, "is not a valid environment variable"),
        ({"env": [("A",)]}, "env must map names to strings"),
    ],
)
def test_settings_are_validated_with_one_line_errors(kwargs, message):
    with pytest.raises(UserError) as info:
        VerusSettings(**{"command": ("verus",), **kwargs})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_settings_from_config():
    s = VerusSettings.from_config(
        {"command": ["verus"], "timeout": 30, "rlimit": None, "env": {"B": "2", "A": "1"}}
    )
    assert s.timeout == 30 and s.rlimit is None and s.env == (("A", "1"), ("B", "2"))
    with pytest.raises(UserError, match="unknown key"):
        VerusSettings.from_config({"time_out": 3})


def test_missing_verus_is_a_one_line_error(tmp_path):
    s = VerusSettings(command=("definitely-not-verus-here",))
    with pytest.raises(MissingToolError) as info:
        check_verus(s)
    assert "containers/verus.def" in str(info.value) and "\n" not in str(info.value)
    assert not verus_available(s)
    not_executable = tmp_path / "verus"
    not_executable.write_text("#!/bin/sh\n")
    assert not verus_available(VerusSettings(command=(str(not_executable),)))
    with pytest.raises(MissingToolError):
        verify([VerusJob("a", "fn main() {}")], s)
    assert verus_available(fake_settings())


def test_tool_dirs_and_sandbox_env(monkeypatch, tmp_path):
    assert str(FAKE.parent) in tool_dirs(fake_settings())
    # The Rust toolchain and z3 that Verus's environment names are shown in the sandbox too.
    (tmp_path / "rustup").mkdir()
    (tmp_path / "z3dir").mkdir()
    (tmp_path / "z3dir" / "z3").write_text("")
    monkeypatch.setenv("RUSTUP_HOME", str(tmp_path / "rustup"))
    monkeypatch.delenv("CARGO_HOME", raising=False)
    dirs = tool_dirs(fake_settings(env={"VERUS_Z3_PATH": str(tmp_path / "z3dir" / "z3")}))
    assert str(tmp_path / "rustup") in dirs and str(tmp_path / "z3dir") in dirs
    monkeypatch.setenv("RUSTUP_HOME", "/opt/rustup")
    monkeypatch.setenv("CARGO_HOME", "/opt/cargo")
    monkeypatch.delenv("VERUS_Z3_PATH", raising=False)
    env = sandbox_env(fake_settings(env={"EXTRA": "1"}))
    assert env["PATH"].split(":")[:2] == [str(FAKE.parent), "/opt/cargo/bin"]
    assert env["PATH"].endswith(S.SAFE_PATH)
    assert env["RUSTUP_HOME"] == "/opt/rustup" and env["EXTRA"] == "1" and "VERUS_Z3_PATH" not in env


def test_driver_script_quotes_the_command():
    script = driver_script(["/opt/it's/verus", "--flag"])
    assert "'/opt/it'\\''s/verus' '--flag' \"$@\"" in script and "exit 97" in script


# ------------------------------------------------------------------ runs through the sandbox


RECORDED_CASES = [
    ("verified", "verified", 2, 0, 1),
    ("verified_stdout_summary", "verified", 2, 0, 1),
    ("verification_errors", "failed", 1, 1, 1),
    ("syntax_error", "compile_error", 0, 0, 1),
    ("vir_error", "compile_error", 0, 0, 1),
]


@pytest.mark.parametrize("output_json", [True, False])
def test_recorded_outcomes_through_the_sandbox(sandbox, output_json):
    jobs = [VerusJob(case, marked(case)) for case, *_ in RECORDED_CASES]
    stats: dict[str, int] = {}
    verdicts = verify(jobs, fake_settings(output_json=output_json), sandbox=sandbox, stats=stats)
    assert [v.name for v in verdicts] == [j.name for j in jobs]
    got = [(v.status, v.verified, v.errors, v.exit_code) for v in verdicts]
    assert got == [
        (status, verified, errors, 0 if status == "verified" else 1)
        for _, status, verified, errors, _ in RECORDED_CASES
    ]
    assert stats == {"processes": len(jobs), "retries": 0}
    failed = verdicts[2]
    assert failed.messages == [f"error: postcondition not satisfied ({FILE_NAME}:14:9)"]
    assert verdicts[3].detail == f"error: expected `,` ({FILE_NAME}:10:20)"
    assert {v.source for v in verdicts[:3]} == ({"json"} if output_json else {"text"})


def test_known_crash_is_retried_then_recorded(sandbox):
    stats: dict[str, int] = {}
    (verdict,) = verify(
        [VerusJob("panics", marked("rustc_panic"))], fake_settings(retries=2), sandbox=sandbox, stats=stats
    )
    assert verdict.status == "crash" and verdict.attempts == 3 and verdict.exit_code == 101
    assert verdict.detail.startswith("Verus crashed: thread 'rustc' (48213) panicked at")
    assert verdict.detail.endswith("(after 3 runs)")
    assert stats == {"processes": 3, "retries": 2}
    (once,) = verify([VerusJob("panics", marked("rustc_panic"))], fake_settings(retries=0), sandbox=sandbox)
    assert once.status == "crash" and once.attempts == 1 and "after" not in once.detail


class FlakyMachine:
    """TEST DOUBLE for an unlucky machine: forwards every run to the real sandbox, but the
    first ``crashes`` runs ask the Verus test double (through its environment) to replay
    the rustc panic recording, whatever the file says."""

    def __init__(self, sandbox, crashes: int):
        self.real = sandbox
        self.left = crashes
        self.workers = 1

    def run_command(self, argv, timeout, **kwargs):
        env = dict(kwargs.pop("env", None) or {})
        if self.left > 0:
            self.left -= 1
            env["FAKE_VERUS_FORCE"] = "rustc_panic"
        return self.real.run_command(argv, timeout, env=env, **kwargs)


def test_a_crash_that_goes_away_on_retry_gives_the_real_verdict(sandbox):
    (verdict,) = verify(
        [VerusJob("ok", marked("verified"))],
        fake_settings(retries=2),
        sandbox=FlakyMachine(sandbox, crashes=2),
    )
    assert (verdict.status, verdict.attempts, verdict.verified) == ("verified", 3, 2)
    (verdict,) = verify(
        [VerusJob("ok", marked("verified"))],
        fake_settings(retries=1),
        sandbox=FlakyMachine(sandbox, crashes=2),
    )
    assert (verdict.status, verdict.attempts) == ("crash", 2)


def test_timeout_is_a_failure_and_not_retried(sandbox):
    stats: dict[str, int] = {}
    (verdict,) = verify(
        [VerusJob("slow", marked("timeout"))],
        fake_settings(timeout=1.5, retries=3),
        sandbox=sandbox,
        stats=stats,
    )
    assert verdict.status == "timeout" and verdict.attempts == 1 and verdict.exit_code is None
    assert "did not finish within 1.5 s" in verdict.detail
    assert 1.4 <= verdict.seconds < 10 and stats["processes"] == 1


def test_the_runner_passes_the_file_and_options_verus_expects(sandbox):
    # the double exits 2 with "fake verus: ..." when the command line is not Verus's;
    # a wrong command line therefore shows up as untrusted output
    (bad,) = verify(
        [VerusJob("x", marked("verified"))],
        fake_settings(command=(str(FAKE), "--multiple-errors")),
        sandbox=sandbox,
    )
    assert bad.status == "crash" and bad.exit_code == 2
    (good,) = verify([VerusJob("x", marked("verified"))], fake_settings(rlimit=7), sandbox=sandbox)
    assert good.status == "verified"


def test_unreachable_verus_inside_the_sandbox(tmp_path, sandbox):
    hidden = tmp_path / "verus"  # under /tmp, which the sandbox covers, and not among its tool_dirs
    shutil.copy(FAKE, hidden)
    hidden.chmod(0o755)
    if str(hidden).startswith(tuple(tool_dirs(fake_settings()))):
        pytest.skip("the temporary folder is visible inside the sandbox here")
    (verdict,) = verify(
        [VerusJob("x", marked("verified"))], fake_settings(command=(str(hidden),)), sandbox=sandbox
    )
    assert verdict.status == "crash" and verdict.exit_code == 97
    assert "cannot execute Verus" in verdict.detail


def test_text_no_run_should_see(sandbox):
    verdicts = verify(
        [
            VerusJob("nul", "fn main() {}\x00"),
            VerusJob("long", "//" + "x" * 200_001),
            ("pair", marked("verified")),
        ],
        fake_settings(),
        sandbox=sandbox,
    )
    assert [v.status for v in verdicts] == ["compile_error", "compile_error", "verified"]
    assert "NUL" in verdicts[0].detail and "longer" in verdicts[1].detail


def test_private_sandbox_when_none_is_given(monkeypatch):
    # The sandbox shows only its tool_dirs of the checkout: the double's recordings too.
    from selfplay.verus import runner

    real = runner.tool_dirs
    monkeypatch.setattr(runner, "tool_dirs", lambda settings=None: real(settings) + [str(RECORDED)])
    (verdict,) = verify([VerusJob("ok", marked("verification_errors"))], fake_settings())
    assert verdict.status == "failed" and verdict.errors == 1


def test_verdict_record_shape():
    v = VerusVerdict("a", "failed", verified=1, errors=1, messages=["error: x"], seconds=0.1234567)
    assert v.to_dict() == {
        "name": "a",
        "status": "failed",
        "verified": 1,
        "errors": 1,
        "messages": ["error: x"],
        "seconds": 0.123457,
        "detail": None,
        "attempts": 1,
        "exit_code": None,
        "source": None,
    }
    with pytest.raises(ValueError):
        VerusVerdict("a", "passed")
    with pytest.raises(TypeError):
        VerusJob("a", None)  # type: ignore[arg-type]


def test_fake_is_named_as_a_test_double():
    assert "TEST DOUBLE" in FAKE.read_text() and os.access(FAKE, os.X_OK)
