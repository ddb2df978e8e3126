"""The Dafny runner: reading Dafny 2.3's output, wrapping jobs in modules, real verification.

The text-level tests need no Dafny.  The real ones share one sandbox and two
verify() calls over one mixed set of programs (one process per job, then batched),
plus a short time-limit run; they are skipped, naming the package, when Dafny or
the z3 4.8.5 wheel is missing.
"""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from selfplay.dafny import runner as R
from selfplay.dafny.runner import (
    DafnyJob,
    DafnySettings,
    DafnyVerdict,
    batch_problem,
    check_dafny,
    parse_output,
    split_boogie_name,
    verify,
    wrap,
)
from selfplay.errors import MissingToolError, UserError


def _tools_missing() -> str | None:
    try:
        check_dafny(DafnySettings())
    except MissingToolError as exc:
        return str(exc)
    return None


MISSING = _tools_missing()
needs_dafny = pytest.mark.skipif(MISSING is not None, reason=f"real Dafny tests skipped: {MISSING}")

# ------------------------------------------------------------------ programs

MAX_OK = """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
  ensures m == a || m == b
{
  if a > b { m := a; } else { m := b; }
}
"""
MAX_BAD = """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  m := a;
}
"""
PARSE_BAD = """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  m := a +;
}
"""
PARSE_BAD_2 = "method Twice(x: int) returns (y: int) ensures y == 2 * x { y := x + x }\n"
RESOLUTION_BAD = """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  m := c;
}
"""
VERIFY_FALSE = """method {:verify false} Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  m := a;
}
"""
WITH_HELPERS = """function F(x: nat): nat { if x == 0 then 0 else F(x - 1) + 1 }
lemma FId(x: nat) ensures F(x) == x {}
method Abs'(x: int) returns (y: int) ensures y >= 0 ensures y == x || y == -x
{
  if x < 0 { y := -x; } else { y := x; }
}
"""
ASSUMES = """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  assume a >= b;
  m := a;
}
"""
SPEC_ONLY = "method Max(a: int, b: int) returns (m: int)\n  ensures m >= a && m >= b\n"
OWN_MODULE = """module Inner {
  method Inc(x: int) returns (y: int) ensures y == x + 1 { y := x + 1; }
}
"""
# A {:msg} attribute on an assertion makes Dafny 2.3 itself crash (NullReferenceException).
CRASHES_DAFNY = """method M(x: int) returns (y: int) ensures y > 0
{
  y := x;
  assert {:msg "boom"} y > 5;
}
"""
SLOW = """method Slow(a: int, b: int, c: int, d: int) returns (r: int)
  requires a > 0 && b > 0 && c > 0 && d > 0
  ensures r == 0
{
  assert (a*b + c*d) * (a*b + c*d) * a != (a*a*b*b + 2*a*b*c*d + c*c*d*d) * b + 7 || a == b;
  r := 0;
}
"""

MIXED = [
    DafnyJob("ok", MAX_OK),
    DafnyJob("bad", MAX_BAD),
    DafnyJob("parse", PARSE_BAD),
    DafnyJob("helpers", WITH_HELPERS),
    DafnyJob("resolution", RESOLUTION_BAD),
    DafnyJob("verify_false", VERIFY_FALSE),
    DafnyJob("parse2", PARSE_BAD_2),
    DafnyJob("assumes", ASSUMES),
    DafnyJob("spec", SPEC_ONLY, no_cheating=False),
    DafnyJob("spec_cheating", SPEC_ONLY),
    DafnyJob("own_module", OWN_MODULE),
    DafnyJob("crash", CRASHES_DAFNY),
    DafnyJob("ok_again", MAX_OK.replace("Max", "Biggest")),
]


# ------------------------------------------------------------------ text level (no Dafny)


def test_braces_in_comments_and_literals_do_not_count_for_wrapping():
    text = (
        '/* a /* nested */ comment { */ method M() { var s := "}\\"{"; var v := @"a""}\n{";\n'
        "  var c := '}'; var d := '\\''; var x' := 1; // } trailing\n}\n"
    )
    assert batch_problem(text) is None
    assert "string" in batch_problem('method M() { var s := "abc\n"; }')


@pytest.mark.parametrize(
    "text,why",
    [
        (MAX_OK, None),
        (WITH_HELPERS, None),
        (OWN_MODULE, "module"),
        ('include "other.dfy"\n' + MAX_OK, "include"),
        ("import opened Foo\n" + MAX_OK, "import"),
        (MAX_OK + "}\nmodule SelfplayJob1 {\n", "brace"),
        (MAX_OK + "{", "brace"),
        (MAX_OK.replace("Max", "SelfplayJob3"), "reserved"),
        ("/* open comment\n" + MAX_OK, "comment"),
        (MAX_OK + "\x1b[2J", "control"),
    ],
)
def test_batch_problem(text, why):
    found = batch_problem(text)
    if why is None:
        assert found is None
    else:
        assert found is not None and why in found


def test_wrap_keeps_text_one_line_lower():
    wrapped = wrap(MAX_BAD, 7)
    assert wrapped.splitlines()[0] == "module SelfplayJob7 {"
    assert wrapped.splitlines()[1:6] == MAX_BAD.splitlines()
    assert wrapped.rstrip().endswith("}")


def test_split_boogie_name():
    assert split_boogie_name("Impl$$_module.__default.Max") == ("", "Max")
    assert split_boogie_name("CheckWellformed$$_3_SelfplayJob3.__default.Fib") == (
        "SelfplayJob3",
        "Fib/wellformed",
    )
    assert split_boogie_name("Impl$$_module.C____d.is__ok_q") == ("", "C__d.is_ok?")
    assert split_boogie_name("Impl$$_module.__default.Max_k") == ("", "Max'")
    assert split_boogie_name("OverrideCheck$$_module.D.N") == ("", "D.N/override")
    assert split_boogie_name("Impl$$_1_Inner.__default.Inc") == ("Inner", "Inc")
    assert split_boogie_name("not a name") is None


# Dafny 2.3's output for two wrapped jobs (files j0.dfy and j5.dfy), as measured.
BATCH_OUT = """[TRACE] Using prover: /usr/bin/z3
Dafny 2.3.0.10506
Parsing j0.dfy
Parsing j5.dfy
Coalescing blocks...
Inlining...

Running abstract interpretation...
  [0.021942 s]
[TRACE] Using prover: /usr/bin/z3

Verifying CheckWellformed$$_0_SelfplayJob0.__default.F ...
  [0.271 s, 6 proof obligations]  verified

Verifying Impl$$_0_SelfplayJob0.__default.FId ...
  [0.038 s, 1 proof obligation]  verified

Verifying Impl$$_0_SelfplayJob0.__default.Abs ...
  [0.044 s, 2 proof obligations]  verified

Verifying Impl$$_1_SelfplayJob5.__default.Max ...
  [0.120 s, 2 proof obligations]  error
j5.dfy(4,0): Error BP5003: A postcondition might not hold on this return path.
j5.dfy(3,22): Related location: This is the postcondition that might not hold.
Execution trace:
    (0,0): anon0

Dafny program verifier finished with 3 verified, 1 error
"""
WHERE = {"j0.dfy": (0, 1), "j5.dfy": (5, 1)}
MODULES = {"SelfplayJob0": 0, "SelfplayJob5": 5}


def test_parse_output_attributes_a_batch():
    rep = parse_output(BATCH_OUT, "", 4, WHERE, MODULES)
    assert rep.phase == "verification" and rep.problems == [] and rep.header == "2.3.0.10506"
    good = R.verdict_from_report(rep, 0, "good", 0.5)
    bad = R.verdict_from_report(rep, 5, "bad", 0.5)
    assert good.status == "verified" and good.verified == 3 and good.errors == 0
    assert good.implementations == {"F/wellformed": "verified", "FId": "verified", "Abs": "verified"}
    assert bad.status == "failed" and bad.errors == 1 and bad.implementations == {"Max": "error"}
    assert bad.messages == [
        "program.dfy(3,0): Error BP5003: A postcondition might not hold on this return path.",
        "program.dfy(2,22): Related location: This is the postcondition that might not hold.",
    ]


@pytest.mark.parametrize(
    "change,exit_code,problem",
    [
        (lambda s: s.replace("3 verified, 1 error", "4 verified, 1 error"), 4, "verified"),
        (lambda s: s.replace("3 verified, 1 error", "3 verified, 0 errors"), 4, "errors"),
        (lambda s: s, 0, "exit code"),
        (lambda s: s.replace("  [0.044 s, 2 proof obligations]  verified\n", ""), 4, "no outcome"),
        (lambda s: s.replace("_1_SelfplayJob5", "_1_SelfplayJob6"), 4, "no job"),
        (lambda s: s.replace("j5.dfy(4,0)", "j6.dfy(4,0)"), 4, "no job's file"),
        (lambda s: s + "Prover error: something odd\n", 4, "summary"),
        (
            lambda s: (
                s.replace("Dafny program verifier finished", "(injected) Dafny program verifier finished")
                + "Dafny program verifier finished with 4 verified, 0 errors\n"
            ),
            0,
            "verified",
        ),
    ],
)
def test_parse_output_distrusts_inconsistent_runs(change, exit_code, problem):
    rep = parse_output(change(BATCH_OUT), "", exit_code, WHERE, MODULES)
    assert any(problem in p for p in rep.problems), rep.problems


def test_parse_output_reads_parse_and_resolution_failures():
    out = (
        "Dafny 2.3.0.10506\nj5.dfy(5,10): Error: invalid UnaryExpression\n1 parse errors detected in j5.dfy\n"
    )
    rep = parse_output(out, "", 2, WHERE, MODULES)
    assert rep.phase == "parse" and rep.culprits == {5} and rep.problems == []
    assert R.verdict_from_report(rep, 5, "p", 0.1).messages == [
        "program.dfy(4,10): Error: invalid UnaryExpression"
    ]
    out = (
        "Dafny 2.3.0.10506\nj0.dfy(5,7): Error: unresolved identifier: c\nj5.dfy(2,1): Error: unresolved "
        "identifier: d\n2 resolution/type errors detected in the program\n"
    )
    rep = parse_output(out, "", 2, WHERE, MODULES)
    assert rep.phase == "resolution" and rep.culprits == {0, 5} and rep.problems == []


def test_several_failures_in_one_implementation():
    out = """Dafny 2.3.0.10506
Verifying Impl$$_module.__default.Max ...
  [0.427 s, 3 proof obligations]  errors
program.dfy(6,11): Error BP5003: A postcondition might not hold on this return path.
program.dfy(3,12): Related location: This is the postcondition that might not hold.
Execution trace:
    (0,0): anon0
    (0,0): anon3_Then
program.dfy(6,28): Error BP5003: A postcondition might not hold on this return path.
program.dfy(3,22): Related location: This is the postcondition that might not hold.
Execution trace:
    program.dfy(7,3): anon16_LoopHead

Dafny program verifier finished with 0 verified, 2 errors
"""
    rep = parse_output(out, "", 4, {"program.dfy": (0, 0)}, {}, solo=0)
    assert rep.problems == []
    v = R.verdict_from_report(rep, 0, "max", 0.4)
    assert (
        v.status == "failed"
        and v.errors == 2
        and v.implementations == {"Max": "error"}
        and len(v.messages) == 4
    )


def test_wrong_z3_is_an_environment_failure_despite_the_summary():
    out = (
        "Dafny 2.3.0.10506\nProver error: line 18 column 28: unknown parameter 'model_compress'\n"
        "Legal parameters are:\n  auto_config (bool) (default: true)\n\n"
        "Dafny program verifier finished with 1 verified, 0 errors\n"
    )
    rep = parse_output(out, "", 0, {"program.dfy": (0, 0)}, {}, solo=0)
    assert rep.environment is not None and "model_compress" in rep.environment


def test_timeouts_and_their_messages():
    out = """Dafny 2.3.0.10506
Verifying CheckWellformed$$_module.__default.Fib ...
  [0.230 s, 9 proof obligations]  verified

Verifying Impl$$_module.__default.Slow ...
  [2.052 s, 2 proof obligations]  timed out
program.dfy(2,7): Verification of 'Impl$$_module.__default.Slow' timed out after 2 seconds
program.dfy(6,82): Timed out on: assertion violation
Execution trace:
    (0,0): anon0

Dafny program verifier finished with 1 verified, 0 errors, 1 time out
"""
    rep = parse_output(out, "", 4, {"program.dfy": (0, 0)}, {}, solo=0)
    assert rep.problems == []
    v = R.verdict_from_report(rep, 0, "slow", 2.5)
    assert v.status == "timeout" and v.implementations == {"Fib/wellformed": "verified", "Slow": "timeout"}
    assert v.messages[0] == "program.dfy(2,7): Verification of 'Slow' timed out after 2 seconds"


def test_settings_jobs_and_verdicts_validate():
    with pytest.raises(ValueError):
        DafnySettings(time_limit=0)
    with pytest.raises(ValueError):
        DafnySettings(run_timeout=float("inf"))
    with pytest.raises(TypeError):
        DafnyJob("x", b"method M() {}")
    with pytest.raises(ValueError):
        DafnyVerdict("x", "great")
    assert DafnySettings(run_timeout=10, per_job_timeout=2).timeout_for(5) == 18
    assert DafnyJob.of(("a", "text")) == DafnyJob("a", "text")
    v = DafnyVerdict("x", "verified", 1, 0, {"Max": "verified"})
    assert v.proved("Max") and not v.proved("Min") and v.to_dict()["implementations"] == {"Max": "verified"}
    assert R._partition(list(range(40)), 24, 2) == [list(range(20)), list(range(20, 40))]
    assert R._partition(list(range(3)), 24, 2) == [[0, 1, 2]]
    assert R._Runner._split([1, 2, 3, 4], {3}) == [[3], [1, 2, 4]]
    assert R._Runner._split([1, 2, 3, 4], set()) == [[1, 2], [3, 4]]


def test_settings_default_dafny_from_environment(monkeypatch):
    monkeypatch.setenv("SELFPLAY_DAFNY", "/opt/dafny/dafny")
    assert DafnySettings().dafny == "/opt/dafny/dafny"


def _one_line_user_error(exc: BaseException) -> str:
    assert isinstance(exc, UserError)
    text = str(exc)
    assert "\n" not in text
    return text


def test_missing_dafny_is_one_line_user_error(tmp_path):
    settings = DafnySettings(dafny=str(tmp_path / "no-such-dafny"))
    with pytest.raises(MissingToolError) as info:
        check_dafny(settings)
    assert "apt-get install dafny" in _one_line_user_error(info.value)
    with pytest.raises(MissingToolError):
        verify([DafnyJob("x", MAX_OK)], settings)


def test_missing_or_wrong_z3_is_one_line_user_error(tmp_path, monkeypatch):
    with pytest.raises(MissingToolError) as info:
        R.resolve_z3(DafnySettings(z3=str(tmp_path / "no-z3")))
    assert "pip install z3-solver==4.8.5.0" in _one_line_user_error(info.value)
    monkeypatch.setattr(R, "wheel_z3", lambda: None)
    with pytest.raises(MissingToolError) as info:
        R.resolve_z3(DafnySettings())
    assert "pip install z3-solver==4.8.5.0" in _one_line_user_error(info.value)
    fake = tmp_path / "z3"
    fake.write_text("#!/bin/sh\necho 'Z3 version 4.8.12 - 64 bit'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(MissingToolError) as info:
        R.resolve_z3(DafnySettings(z3=str(fake)))
    assert "4.8.12" in _one_line_user_error(info.value)


def test_unrunnable_text_gets_a_recorded_reason():
    assert R._early_verdict(DafnyJob("nul", "method M() {}\x00")).status == "parse_error"
    long = R._early_verdict(DafnyJob("long", "//" + "x" * R.MAX_TEXT_CHARS))
    assert long is not None and "longer" in long.detail


# ------------------------------------------------------------------ real Dafny


@pytest.fixture(scope="module")
def sandbox():
    from selfplay.sandbox import Sandbox, SandboxLimits

    with Sandbox(
        workers=2,
        limits=SandboxLimits(
            memory_mb=2048, max_processes=128, max_open_files=256, max_file_mb=16, tmpfs_mb=128
        ),
        tool_dirs=R.tool_dirs(),
    ) as sb:
        yield sb


@pytest.fixture(scope="module")
def solo(sandbox):
    stats: dict[str, int] = {}
    verdicts = verify(MIXED, DafnySettings(), sandbox=sandbox, batch=False, stats=stats)
    assert stats["processes"] == len(MIXED)
    return {v.name: v for v in verdicts}


@pytest.fixture(scope="module")
def batched(sandbox):
    stats: dict[str, int] = {}
    verdicts = verify(MIXED, DafnySettings(), sandbox=sandbox, batch=True, stats=stats)
    assert [v.name for v in verdicts] == [j.name for j in MIXED]
    return {v.name: v for v in verdicts}, stats


@needs_dafny
def test_real_verdicts_one_process_per_job(solo):
    assert solo["ok"].status == "verified" and solo["ok"].proved("Max") and solo["ok"].verified == 1
    bad = solo["bad"]
    assert bad.status == "failed" and bad.errors == 1 and bad.implementations == {"Max": "error"}
    assert (
        bad.messages[0]
        == "program.dfy(3,0): Error BP5003: A postcondition might not hold on this return path."
    )
    assert solo["parse"].status == "parse_error"
    assert solo["parse"].messages == ["program.dfy(4,10): Error: invalid UnaryExpression"]
    assert solo["resolution"].status == "resolution_error"
    assert solo["resolution"].messages == ["program.dfy(4,7): Error: unresolved identifier: c"]
    assert solo["helpers"].implementations == {
        "F/wellformed": "verified",
        "FId": "verified",
        "Abs'": "verified",
    }
    assert solo["own_module"].status == "verified" and solo["own_module"].proved("Inner.Inc")


@needs_dafny
def test_verify_false_target_is_not_reported_verified(solo):
    v = solo["verify_false"]
    # Dafny accepts the file ("0 verified, 0 errors", exit 0) but never looked at Max.
    assert v.status == "verified" and v.verified == 0 and "Max" not in v.implementations
    assert not v.proved("Max")


@needs_dafny
def test_no_cheating(solo):
    assert solo["assumes"].status == "failed" and solo["assumes"].implementations == {"Max": "error"}
    assert solo["spec_cheating"].status == "parse_error"
    assert "must have a body" in solo["spec_cheating"].messages[0]
    assert solo["spec"].status == "verified" and solo["spec"].implementations == {}


@needs_dafny
def test_dafny_crash_is_a_crash_verdict(solo):
    v = solo["crash"]
    assert v.status == "crash" and "without a summary" in v.detail and "NullReferenceException" in v.detail


@needs_dafny
def test_batched_verdicts_equal_one_at_a_time(solo, batched):
    verdicts, stats = batched
    for job in MIXED:
        assert verdicts[job.name].outcome() == solo[job.name].outcome(), job.name
    # the good jobs really shared processes
    assert stats["batched_processes"] >= 1 and stats["processes"] < 2 * len(MIXED)


@needs_dafny
def test_time_limit(sandbox):
    [v] = verify([DafnyJob("slow", SLOW)], DafnySettings(time_limit=1), sandbox=sandbox, batch=False)
    assert v.status == "timeout" and v.implementations == {"Slow": "timeout"}
    assert v.messages[0] == "program.dfy(1,7): Verification of 'Slow' timed out after 1 seconds"


@needs_dafny
def test_wall_clock_timeout_is_a_timeout_with_reason(sandbox):
    [v] = verify([DafnyJob("slow", SLOW)], DafnySettings(time_limit=20, run_timeout=1.5), sandbox=sandbox)
    assert v.status == "timeout" and "wall clock" in v.detail


@needs_dafny
def test_z3_hidden_from_the_sandbox_is_a_crash_with_reason(sandbox, tmp_path):
    hidden = tmp_path / "z3"  # under /tmp, which the sandbox covers with its own tmpfs
    if not str(hidden).startswith("/tmp/"):
        pytest.skip("the test's temporary directory is not under /tmp")
    shutil.copy(R.resolve_z3(DafnySettings()), hidden)
    os.chmod(hidden, 0o755)
    verdicts = verify(
        [DafnyJob("a", MAX_OK), DafnyJob("b", MAX_BAD)], DafnySettings(z3=str(hidden)), sandbox=sandbox
    )
    for v in verdicts:
        assert v.status == "crash" and "cannot execute z3" in v.detail
