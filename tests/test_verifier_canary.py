"""The verifier canaries (selfplay.verifier_canary): every job that believes a verifier
first has it tell a known-good input from a known-bad one, and a verifier that gets
either wrong (or cannot run) stops the job with one line naming it and its answer.

The Python sandbox, GHC and Dafny are the real ones, working and deliberately broken
(a sandbox too small to start Python, GHC and Dafny wrappers that answer success to
everything). Liquid Haskell and Verus cannot be installed here: they are exercised with
the TEST DOUBLES tests/fakes/liquid and tests/fakes/fake_verus.py (which answer the
canary's two inputs as the real tools do) and with small misbehaving doubles written
below (one answering success to everything, one failure to everything, one crashing).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from selfplay import verifier_canary as vc
from selfplay.containers.runtime import runtime_record
from selfplay.errors import UserError
from selfplay.pipeline.step import step

REPO = Path(__file__).resolve().parent.parent
FAKE_LIQUID = REPO / "tests" / "fakes" / "liquid"
FAKE_VERUS = REPO / "tests" / "fakes" / "fake_verus.py"
VERUS_RECORDED = REPO / "tests" / "verus_recorded"

needs_ghc = pytest.mark.skipif(shutil.which("ghc") is None, reason="GHC is missing: apt-get install ghc")


def needs_dafny(fn):
    from selfplay.dafny.runner import dafny_available

    return pytest.mark.skipif(
        not dafny_available(),
        reason="Dafny 2.3 and z3 4.8.5 are not installed (scripts/install_system_test.sh installs them)",
    )(fn)


@pytest.fixture(autouse=True)
def fresh_canaries():
    """Each test is a job of its own: no canary carried over from another test."""
    vc.clear()
    yield
    vc.clear()


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def stops_the_job(fn) -> str:
    """Run ``fn`` as a workflow step does and return the one line the job stopped with."""
    with pytest.raises(SystemExit) as caught:
        with step("canary test", None):
            fn()
    message = str(caught.value)
    assert "\n" not in message, message
    return message


# ------------------------------------------------------------------ the shared part


def test_a_canary_runs_once_per_process_and_its_outcome_is_recorded():
    calls = []

    def ask():
        calls.append(1)
        return [vc.Answer(vc.ACCEPTED, "yes", 0.5), vc.Answer(vc.REJECTED, "no")]

    probes = [vc.Probe("good", vc.ACCEPTED), vc.Probe("bad", vc.REJECTED)]
    first = vc.run_canary("toy", "k", probes, ask)
    again = vc.run_canary("toy", "k", probes, ask)
    assert len(calls) == 1 and first == again and first["passed"]
    assert [(i["name"], i["expected"], i["answered"]) for i in first["inputs"]] == [
        ("good", "accepted", "accepted"),
        ("bad", "rejected", "rejected"),
    ]
    assert first["inputs"][0]["seconds"] == 0.5 and first["inputs"][1]["seconds"] >= 0
    assert runtime_record()["canaries"] == [first]
    vc.run_canary("toy", "other settings", probes, ask)
    assert len(calls) == 2 and len(vc.recorded()) == 2


@pytest.mark.parametrize(
    "answers, words",
    [
        ([vc.Answer(vc.ACCEPTED, "yes"), vc.Answer(vc.ACCEPTED, "yes too")], "known-bad input 'bad'"),
        ([vc.Answer(vc.REJECTED, "no"), vc.Answer(vc.REJECTED, "no")], "known-good input 'good'"),
        ([vc.Answer(vc.ERROR, "crashed"), vc.Answer(vc.REJECTED, "no")], "answered error (crashed)"),
    ],
)
def test_a_wrong_answer_stops_with_one_line_and_stays_failed(answers, words):
    probes = [vc.Probe("good", vc.ACCEPTED), vc.Probe("bad", vc.REJECTED)]
    with pytest.raises(vc.CanaryFailed, match="toy answered") as caught:
        vc.run_canary("toy", "k", probes, lambda: answers)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(caught.value, UserError)
    with pytest.raises(vc.CanaryFailed):  # the same verifier in the same job is not asked again
        vc.run_canary("toy", "k", probes, lambda: [vc.Answer(vc.ACCEPTED, ""), vc.Answer(vc.REJECTED, "")])
    assert vc.recorded()[0]["passed"] is False


def test_a_verifier_that_raises_on_the_canary_is_an_error_answer():
    def ask():
        raise RuntimeError("the runner fell over\nwith a second line")

    with pytest.raises(vc.CanaryFailed, match="answered error \\(RuntimeError: the runner fell over\\)"):
        vc.run_canary("toy", "k", [vc.Probe("good", vc.ACCEPTED), vc.Probe("bad", vc.REJECTED)], ask)


# ------------------------------------------------------------------ Python sandbox


def sinq_cfg(memory_mb: int = 512) -> dict:
    return {"sinq": {"verify": {"workers": 1, "memory_mb": memory_mb}}}


def test_the_real_python_sandbox_passes_its_canary_and_the_job_records_it():
    from selfplay.pipeline import sinq

    with sinq._sandbox(sinq_cfg()) as sb:
        assert sb.run("def f():\n    return 1\n", "f", "{}", 10).status == "ok"  # still usable
    [outcome] = vc.recorded()
    assert outcome["verifier"] == "python-sandbox" and outcome["passed"]
    assert [i["said"] for i in outcome["inputs"]] == ["returned 55", "returned 45"]
    assert runtime_record()["canaries"] == [outcome]


class ForgingSandbox:
    """TEST DOUBLE of a broken sandbox: every program 'returns' 55, whatever it computes."""

    limits = None

    def __init__(self, *args, **kwargs):
        self.closed = False

    def result(self):
        from selfplay.sandbox import ExecResult

        return ExecResult("ok", value=["int", 55], value_repr="55")

    def run_many(self, jobs):
        return [self.result() for _ in jobs]

    def close(self):
        self.closed = True


class DeadSandbox(ForgingSandbox):
    """TEST DOUBLE of a sandbox whose confinement cannot be set up where the job runs:
    every run is an 'error', so every program would read as failing."""

    def result(self):
        from selfplay.sandbox import ExecResult

        return ExecResult("error", detail="sandbox server could not be started")


@pytest.mark.parametrize(
    "double, words",
    [
        (
            ForgingSandbox,
            "python-sandbox answered accepted (returned 55) to its known-bad input 'sum_to_n_off_by_one'",
        ),
        (
            DeadSandbox,
            "python-sandbox answered error (error: sandbox server could not be started) to its known-good",
        ),
    ],
)
def test_a_broken_sandbox_stops_the_sinq_and_evolve_jobs(monkeypatch, double, words):
    import selfplay.sandbox
    from selfplay.pipeline import evolve, sinq

    opened = []
    monkeypatch.setattr(selfplay.sandbox, "Sandbox", lambda *a, **k: opened.append(double()) or opened[-1])
    for job in (
        lambda: sinq._sandbox(sinq_cfg()),
        lambda: evolve._sandbox({"evolve": {"matrix": {"workers": 1, "memory_mb": 512}}}),
    ):
        message = stops_the_job(job)
        assert words in message, message
    assert len(opened) == 2 and all(sb.closed for sb in opened)


# ------------------------------------------------------------------ GHC


@needs_ghc
def test_real_ghc_passes_and_the_source_filter_job_records_it():
    from selfplay.tracks.seq.sources import filter_programs

    cfg = {
        "seed": 1,
        "seq": {"verify": {"timeout": 5.0, "memory_mb": 1024}, "sources": {"filter_timeout": 5.0}},
    }
    kept, rejected = filter_programs([{"code": "inc :: Int -> Int\ninc x = x + 1\n", "origin": "t"}], cfg)
    assert len(kept) == 1 and not rejected
    [outcome] = vc.recorded()
    assert outcome["verifier"] == "ghc" and outcome["passed"]
    assert [i["said"] for i in outcome["inputs"]] == ["value 55", "compile_error"]


@needs_ghc
def test_a_ghc_that_only_pretends_to_compile_is_caught(tmp_path):
    """A wrapper that answers GHC's version questions truthfully but exits 0 without
    compiling anything: every program would read as failing to build."""
    from selfplay.haskell.ghc_check import GhcChecker, GhcSettings
    from selfplay.sandbox import Sandbox, SandboxLimits

    real = shutil.which("ghc")
    wrapper = script(
        tmp_path / "bin" / "ghc", f'#!/bin/sh\ncase "$1" in --*) exec {real} "$@";; esac\nexit 0\n'
    )
    with Sandbox(
        workers=1,
        tool_dirs=[str(wrapper.parent)],
        limits=SandboxLimits(memory_mb=1024, max_processes=64, tmpfs_mb=768),
    ) as sb:
        with GhcChecker(GhcSettings(ghc=str(wrapper)), sandbox=sb) as checker:
            with pytest.raises(vc.CanaryFailed) as caught:
                vc.check_ghc(checker)
    assert "ghc answered rejected (compile_error: GHC stopped without a diagnosis" in str(caught.value)
    assert "known-good input 'sum_to_n_well_typed'" in str(caught.value)


@needs_ghc
def test_a_ghc_the_sandbox_cannot_reach_stops_the_seq_check_job(tmp_path, monkeypatch):
    from selfplay.tracks.seq.verify import candidates_from_generations

    real = shutil.which("ghc")
    script(tmp_path / "bin" / "ghc", f'#!/bin/sh\nexec {real} "$@"\n')  # outside what the sandbox shows
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    source = {
        "id": "s",
        "entry_point": "inc",
        "code": "inc :: Int -> Int\ninc x = x + 1\n",
        "arg_types": ["Int"],
        "result_type": "Int",
    }
    record = {
        "key": "k",
        "meta": {"game": "sinq", "source_id": "s"},
        "outputs": [
            "Generated Program `Q`:\n```haskell\ninc_alt :: Int -> Int\ninc_alt x = x + 2\n```\n"
            "Diverging Input `x`:\n1\n"
        ],
    }
    cfg = {"seed": 1, "seq": {"verify": {"timeout": 5.0, "memory_mb": 1024, "sanity_inputs": 2}}}
    message = stops_the_job(lambda: candidates_from_generations([record], {"s": source}, "round0", cfg))
    assert "verifier canary: ghc answered error" in message and "cannot execute" in message


# ------------------------------------------------------------------ Dafny


def psv_cfg(**dafny) -> dict:
    return {
        "seed": 1,
        "psv": {
            "language": "dafny",
            "verify": {"dafny": {"time_limit": 10, "workers": 1, **dafny}},
            "difficulty": {"tau_easy": 0.8, "tau_medium": 0.2},
        },
    }


@needs_dafny
def test_real_dafny_passes_and_the_scoring_job_records_it(tmp_path):
    from selfplay.pipeline import psv
    from selfplay.records import read_jsonl, write_jsonl
    from selfplay.tracks.psv import prompts

    spec = "method Inc(x: int) returns (y: int)\n  ensures y == x + 1\n"
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "i", "name": "inc", "target": "Inc", "spec": spec}])
    gens = tmp_path / "solve.jsonl"
    write_jsonl(
        gens,
        [
            {
                "messages": prompts.solver_messages("dafny", spec),
                "meta": {"problem_id": "i"},
                "outputs": ["```dafny\n{\n  y := x + 1;\n}\n```"],
            }
        ],
    )  # a body (psv.solve.completion)
    out = tmp_path / "scores.jsonl"
    psv.score_generations(psv_cfg(), str(gens), str(pool), str(out))
    row = read_jsonl(out)[0]
    assert row["samples"][0]["verified"]
    canary = row["verifier"]["canary"]
    assert canary["verifier"] == "dafny" and canary["passed"]
    assert [(i["name"], i["expected"], i["answered"]) for i in canary["inputs"]] == [
        ("max_correct", "accepted", "accepted"),
        ("max_returns_first", "rejected", "rejected"),
    ]
    assert row["runtime"]["canaries"] == [canary]


DAFNY_LIAR = """#!/bin/sh
echo "Dafny 2.3.0.10506"
echo ""
echo "Dafny program verifier finished with 1 verified, 0 errors"
exit 0
"""


@needs_dafny
def test_a_dafny_that_always_prints_success_stops_the_psv_job(tmp_path):
    from selfplay.tracks.psv.verifier import verify_solutions

    liar = script(tmp_path / "bin" / "dafny", DAFNY_LIAR)
    cfg = psv_cfg(dafny=str(liar))
    message = stops_the_job(lambda: verify_solutions(cfg, [("method M()\n", "method M() {}\n")]))
    assert message.startswith("error in canary test: verifier canary: dafny answered error")
    assert "'max_correct'" in message


# ------------------------------------------------------------------ Liquid Haskell (test doubles)

LIQUID_ALWAYS_SAFE = "#!/bin/sh\necho '**** LIQUID: SAFE (1 constraints checked) ****'\nexit 0\n"
LIQUID_ALWAYS_UNSAFE = "#!/bin/sh\necho '**** LIQUID: UNSAFE ****'\nexit 1\n"
LIQUID_CRASHES = "#!/bin/sh\necho 'liquid: internal error' >&2\nkill -SEGV $$\n"


def proof_job(command: str):
    """The SEQ proof-checking step (tracks/seq/proofs.check_attempts) on one attempt."""
    from selfplay.haskell.liquid import LiquidSettings
    from selfplay.tracks.seq.proofs import check_attempts

    cand = {
        "id": "c",
        "code_p": "inc :: Int -> Int\ninc x = x + 1\n",
        "entry_point": "inc",
        "code_q": "inc_alt :: Int -> Int\ninc_alt x = 1 + x\n",
        "name_q": "inc_alt",
    }
    proof = (
        "```haskell\n{-@ lemma_inc_equiv :: x:Int -> { inc x == inc_alt x } @-}\n"
        "lemma_inc_equiv :: Int -> Proof\nlemma_inc_equiv x\n  =   inc x\n  === inc_alt x\n  *** QED\n```\n"
    )
    record = {"key": "g", "meta": {"candidate_id": "c"}, "outputs": [proof]}
    settings = LiquidSettings.from_config({"command": command, "timeout_s": 60.0})
    return check_attempts([record], {"c": cand}, 1, settings, memory_mb=1024)


def test_the_liquid_test_double_passes_and_the_proof_job_goes_on():
    [check] = proof_job(str(FAKE_LIQUID))
    assert check["verdict"]["accepted"]
    [outcome] = vc.recorded()
    assert outcome["verifier"] == "liquid-haskell" and outcome["passed"]
    assert [i["answered"] for i in outcome["inputs"]] == ["accepted", "rejected"]


@pytest.mark.parametrize(
    "double, words",
    [
        (LIQUID_ALWAYS_SAFE, "liquid-haskell answered accepted (safe: accepted"),
        (LIQUID_ALWAYS_UNSAFE, "liquid-haskell answered rejected (unsafe"),
        (LIQUID_CRASHES, "liquid-haskell answered error ("),
    ],
    ids=["always-safe", "always-unsafe", "crashes"],
)
def test_a_misbehaving_liquid_double_stops_the_proof_job(tmp_path, double, words):
    command = script(tmp_path / "bin" / "liquid", double)
    message = stops_the_job(lambda: proof_job(str(command)))
    assert words in message, message


def test_without_liquid_haskell_there_is_no_canary_and_nothing_is_accepted(tmp_path):
    [check] = proof_job(str(tmp_path / "no-liquid-here"))
    assert not check["verdict"]["accepted"] and vc.recorded() == []


def test_the_liquid_canary_runs_the_tool_once_per_job(tmp_path):
    log = tmp_path / "calls.log"
    env = {**os.environ, "FAKE_LIQUID_LOG": str(log)}
    settings = {"command": [str(FAKE_LIQUID)], "timeout_s": 30}
    vc.check_liquid(settings, workdir=tmp_path, env=env)
    vc.check_liquid(settings, workdir=tmp_path, env=env)
    assert len(log.read_text().splitlines()) == 2  # its two inputs, once


# ------------------------------------------------------------------ Verus (test doubles)


@pytest.fixture
def verus_recordings_reachable(monkeypatch):
    """fake_verus.py reads its recordings from tests/verus_recorded, which a checkout
    under /tmp would hide inside the sandbox: show that folder too."""
    from selfplay.verus import runner

    real = runner.tool_dirs
    monkeypatch.setattr(runner, "tool_dirs", lambda settings=None: real(settings) + [str(VERUS_RECORDED)])


def verus_cfg(**extra) -> dict:
    return {
        "seed": 1,
        "psv": {
            "language": "verus",
            "verify": {
                "verus": {
                    "command": [str(FAKE_VERUS)],
                    "timeout": 20.0,
                    "retries": 0,
                    "memory_mb": 2048,
                    "max_processes": 64,
                    "workers": 1,
                    **extra,
                }
            },
        },
    }


def test_the_verus_test_double_passes_and_the_verdicts_are_used(verus_recordings_reachable):
    from selfplay.tracks.psv.verifier import require_canary, verifier_description

    outcome = require_canary(verus_cfg())
    assert outcome["verifier"] == "verus" and outcome["passed"]
    assert [i["said"].split(",")[0] for i in outcome["inputs"]] == ["verified", "failed"]
    assert verifier_description(verus_cfg())["canary"] == outcome


@pytest.mark.parametrize(
    "forced, words",
    [
        ("verified", "verus answered accepted (verified, 2 verified, 0 errors) to its known-bad input"),
        (
            "verification_errors",
            "verus answered rejected (failed, 1 verified, 1 errors) to its known-good input",
        ),
        ("rustc_panic", "verus answered error (crash"),
    ],
)
def test_a_misbehaving_verus_double_stops_the_psv_job(verus_recordings_reachable, forced, words):
    from selfplay.tracks.psv.verifier import check_specs

    cfg = verus_cfg(env={"FAKE_VERUS_FORCE": forced})
    message = stops_the_job(lambda: check_specs(cfg, ["fn f() {}"]))
    assert words in message, message
