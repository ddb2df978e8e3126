"""Spec checks and solution verification with real Dafny 2.3 (selfplay.dafny.checks):
every shipped problem's spec is valid and not vacuous and its reference solution is
verified; the corpus's specs get the verdicts measured by hand; the corpus's cheating
solutions, which plain Dafny accepts, are refused with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.dafny.checks import check_specs, verify_solutions
from selfplay.dafny.runner import DafnySettings, dafny_available
from selfplay.data.dafny_problems import load_problems

CORPUS = Path(__file__).parent / "dafny_corpus"
ENTRIES = json.loads((CORPUS / "corpus.json").read_text())["entries"]

pytestmark = pytest.mark.skipif(
    not dafny_available(), reason="Dafny 2.3 and z3 4.8.5 are not installed (make install-test installs them)"
)


@pytest.fixture(scope="module")
def sandbox():
    from selfplay.dafny.runner import tool_dirs
    from selfplay.sandbox import Sandbox, SandboxLimits

    with Sandbox(workers=2, limits=SandboxLimits(memory_mb=2048), tool_dirs=tool_dirs()) as box:
        yield box


def text(name: str) -> str:
    return (CORPUS / name).read_text()


def test_every_shipped_spec_is_valid_and_every_reference_solution_verified(sandbox):
    problems = load_problems()
    specs = check_specs([p["spec"] for p in problems], DafnySettings(), sandbox)
    assert [(p["name"], s["reason"]) for p, s in zip(problems, specs) if not s["ok"]] == []
    assert all(s["target"] == p["target"] for p, s in zip(problems, specs))
    solved = verify_solutions([(p["spec"], p["solution"]) for p in problems], DafnySettings(), sandbox)
    assert [(p["name"], s["reason"]) for p, s in zip(problems, solved) if not s["verified"]] == []


def test_corpus_specs_get_their_measured_verdicts(sandbox):
    specs = [e for e in ENTRIES if e["role"] == "spec"]
    got = check_specs([text(e["file"]) for e in specs], DafnySettings(), sandbox)
    for entry, record in zip(specs, got):
        if entry["expect"]:  # not a spec at all: refused before Dafny runs
            assert record["reason"] == f"spec:{entry['expect'][0]}" and record["checks"] == {}, entry["file"]
        else:
            assert (record["reason"] or "spec_ok") == entry["spec_verdict"], (entry["file"], record)


def test_corpus_solutions_honest_ones_verified_cheats_refused_with_reasons(sandbox):
    solutions = [e for e in ENTRIES if e["role"] == "solution"]
    got = verify_solutions([(text(e["spec"]), text(e["file"])) for e in solutions], DafnySettings(), sandbox)
    for entry, record in zip(solutions, got):
        if entry["expect"]:
            assert not record["verified"] and record["dafny"] is None, entry["file"]
            assert record["reason"].startswith("screen:"), (entry["file"], record["reason"])
            assert set(record["screen"]["reasons"]) == set(entry["expect"]), (entry["file"], record["reason"])
        else:
            assert record["verified"], (entry["file"], record)
    # the point of the screen: plain Dafny accepted many of the refused ones
    fooled = [
        e for e in solutions if e["expect"] and e["dafny"].get("plain", {}).get("outcome") == "verified"
    ]
    assert len(fooled) >= 10


def test_a_solution_that_breaks_the_spec_or_does_not_verify_is_not_counted(sandbox):
    spec = text("spec_abs.dfy")
    honest = text("abs_honest.dfy")
    wrong = honest.replace("r := -x;", "r := x;")  # the spec part unchanged, the body wrong
    assert wrong != honest
    records = verify_solutions(
        [(spec, honest), (spec, wrong), (spec, "method Abs() {}")], DafnySettings(), sandbox
    )
    assert records[0]["verified"] and records[0]["reason"] is None
    assert not records[1]["verified"] and records[1]["reason"] == "dafny:failed"
    assert not records[2]["verified"] and records[2]["reason"].startswith("screen:")
