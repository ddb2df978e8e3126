"""Table 3's Haskell code-generation benchmarks on the shared layer: the shipped problems
are right (checked against reference solutions with real GHC), samples are scored by
running the tests, and the summary is pass@1 and compile errors per trial."""

from __future__ import annotations

import shutil

import pytest

from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks.multipl_e import HaskellMini, completion_program, evaluate, load_mini
from selfplay.evaluate.modes import EvalMode

pytestmark = pytest.mark.skipif(shutil.which("ghc") is None, reason="GHC is missing: apt-get install ghc")

SOLUTIONS = {p["name"]: p["reference"] for p in load_mini()}  # our references, shipped with the problems
SETTINGS = {"timeout": 5.0, "memory_mb": 1024}


def answer(code: str) -> str:
    return f"Here it is.\n```haskell\n{code}\n```\n"


def test_shipped_problems_are_right_and_completions_are_scored():
    problems = {p["name"]: p for p in load_mini()}
    assert len(problems) == 10 and set(problems) == set(SOLUTIONS)
    samples = [
        Sample(name, k, text)
        for name, code in SOLUTIONS.items()
        for k, text in enumerate([answer(f"{problems[name]['signature']}\n{code}"), answer(code)])
    ]
    # Wrong, non-compiling and unparseable samples for one problem.
    bad_texts = [answer("pairSums xs = xs"), answer("pairSums xs = zipWith (+) xs"), "no code here"]
    samples += [Sample("pairSums", 10 + k, text) for k, text in enumerate(bad_texts)]
    rows = evaluate(problems, samples, SETTINGS)
    good = [r for r in rows if r["sample"] < 10]
    assert all(r["passed"] for r in good), [(r["id"], r.get("tests")) for r in good if not r["passed"]]
    bad = [r for r in rows if r["sample"] >= 10]
    assert [r["passed"] for r in bad] == [False, False, False]
    assert [r["compile_error"] for r in bad] == [False, True, False]
    assert bad[2]["reason"] == "parse:no_code_block"


def test_summary_is_pass_at_1_and_compile_errors_per_trial():
    rows = [
        {"id": "a", "sample": 0, "passed": True, "compile_error": False, "reason": None},
        {"id": "a", "sample": 1, "passed": False, "compile_error": True, "reason": "compile_error"},
        {"id": "b", "sample": 0, "passed": False, "compile_error": True, "reason": "compile_error"},
        {"id": "b", "sample": 1, "passed": False, "compile_error": True, "reason": "compile_error"},
    ]
    mode = EvalMode("sampled", 2, False, "mean", {})
    s = HaskellMini().summarise({"a": {}, "b": {}}, rows, mode)
    assert s["pass@1"] == pytest.approx(0.25) and s["compile_errors"] == pytest.approx(1.5)
    assert HaskellMini().summarise({}, [], mode)["n"] == 0


def test_a_bare_equation_gets_the_signature():
    problem = load_mini()[0]
    code, _ = completion_program(problem, answer(f"{problem['entry_point']} s = 0"))
    assert code.startswith(problem["signature"])


def test_table3_says_when_an_agent_had_no_trained_adapter(tmp_path):
    from selfplay.records import write_json
    from selfplay.report.seq import table3

    def summary(agent, adapter, passed):
        path = tmp_path / f"{agent}.json"
        write_json(
            path,
            {
                "benchmark": "haskell_mini",
                "n": 1,
                "samples": 1,
                "pass@1": 1.0 if passed else 0.0,
                "compile_errors": 0.0,
                "adapter": adapter,
                "decoding": "free",
                "groups": {},
            },
        )
        return str(path)

    files = {
        ("haskell_mini", "base"): summary("base", None, False),
        ("haskell_mini", "alice"): summary("alice", "results/seq/x/round2/adapter_alice", True),
        ("haskell_mini", "bob"): summary("bob", None, True),
    }  # Bob's training had no examples
    frame = table3(files, ["haskell_mini"], str(tmp_path / "t3.csv"), str(tmp_path / "t3.md"))
    assert list(frame["Pass@1 (%) Δ"]) == ["+100.0", "+100.0"]
    md = (tmp_path / "t3.md").read_text()
    assert (
        "Bob: no adapter was trained in this run" in md
        and "Alice" not in md.split("no adapter")[0].split("\n")[-1]
    )
    files[("haskell_mini", "bob")] = summary("bob", "results/seq/x/bob/adapter", True)
    table3(files, ["haskell_mini"], str(tmp_path / "t3.csv"), str(tmp_path / "t3.md"))
    assert "no adapter was trained" not in (tmp_path / "t3.md").read_text()
