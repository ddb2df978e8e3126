"""check_specs and verify_solutions end to end, on the corpus, with the TEST DOUBLE
tests/fakes/fake_verus.py standing in for Verus (the real runner, sandbox and
subprocess path; the double replays recorded Verus outputs chosen by the markers
FAKE_VERUS_*: <case> in the files, see its docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.verus import checks
from selfplay.verus.runner import VerusVerdict
from selfplay.verus.settings import VerusSettings, tool_dirs
from selfplay.verus.spec import parse_spec

REPO = Path(__file__).resolve().parents[1]
FAKE = REPO / "tests" / "fakes" / "fake_verus.py"
RECORDED = REPO / "tests" / "verus_recorded"
CORPUS = REPO / "tests" / "verus_corpus"
ENTRIES = json.loads((CORPUS / "corpus.json").read_text())["entries"]
SETTINGS = VerusSettings(command=(str(FAKE),), timeout=2.0, retries=1, memory_mb=2048, max_processes=64)


def read(name: str) -> str:
    return (CORPUS / name).read_text()


@pytest.fixture(scope="module")
def sandbox():
    from selfplay.sandbox import Sandbox, SandboxLimits

    with Sandbox(
        workers=2,
        tool_dirs=tool_dirs(SETTINGS) + [str(RECORDED)],
        limits=SandboxLimits(
            memory_mb=2048, max_processes=64, max_open_files=1024, max_file_mb=64, tmpfs_mb=128
        ),
    ) as sb:
        yield sb


@pytest.fixture(scope="module")
def spec_records(sandbox):
    specs = [e for e in ENTRIES if e["role"] == "spec"]
    records = checks.check_specs([read(e["file"]) for e in specs], SETTINGS, sandbox)
    return {e["file"]: (e, r) for e, r in zip(specs, records)}


@pytest.fixture(scope="module")
def solution_records(sandbox):
    sols = [e for e in ENTRIES if e["role"] == "solution"]
    records = checks.verify_solutions([(read(e["spec"]), read(e["file"])) for e in sols], SETTINGS, sandbox)
    return {e["file"]: (e, r) for e, r in zip(sols, records)}


def test_every_spec_gets_its_expected_verdict(spec_records):
    for name, (entry, record) in spec_records.items():
        assert set(record) == {"ok", "reason", "detail", "target", "checks"}, name
        if entry["expect"]:
            assert record["ok"] is False and record["reason"] == f"spec:{entry['expect'][0]}", name
            assert record["checks"] == {} and record["target"] is None
        else:
            want = entry["spec_verdict"]
            assert record["ok"] == (want == "spec_ok"), (name, record)
            assert record["reason"] == (None if want == "spec_ok" else want), (name, record)
            assert record["target"] == parse_spec(read(name)).target_name and record["detail"]


def test_spec_check_records_say_what_each_check_gave(spec_records):
    _, record = spec_records["spec_max.rs"]
    assert {k: (v["outcome"], v["status"]) for k, v in record["checks"].items()} == {
        "validity": ("verified", "verified"),
        "preconditions": ("refuted", "failed"),
        "postconditions": ("refuted", "failed"),
    }
    assert record["checks"]["preconditions"]["messages"] == [
        "error: postcondition not satisfied (program.rs:14:9)"
    ]
    _, double = spec_records["spec_double.rs"]
    assert set(double["checks"]) == {"validity", "postconditions"}
    _, invalid = spec_records["invalid_types.rs"]
    assert invalid["checks"]["validity"] == {
        "outcome": "refuted",
        "status": "compile_error",
        "messages": ["error: expected `,` (program.rs:10:20)"],
    }
    _, slow = spec_records["spec_slow.rs"]
    assert slow["checks"]["validity"]["status"] == "timeout"


def test_every_solution_gets_its_expected_verdict(solution_records):
    for name, (entry, record) in solution_records.items():
        assert set(record) == {"verified", "reason", "screen", "verus"}, name
        if entry["expect"]:
            assert record["verified"] is False and record["verus"] is None, name
            assert record["reason"] == "screen:" + ",".join(entry["expect"]), (name, record["reason"])
            assert record["screen"]["reasons"] == entry["expect"]
        elif entry["verus"] == "verified":
            assert record["verified"] is True and record["reason"] is None, (name, record)
            assert record["verus"]["status"] == "verified" and record["screen"]["ok"]
        else:
            assert record["verified"] is False and record["reason"] == entry["verus"], (name, record)
            assert record["screen"]["ok"] and record["verus"] is not None


def test_solution_failures_keep_verus_details(solution_records):
    _, wrong = solution_records["max_wrong.rs"]
    assert wrong["verus"]["messages"] == ["error: postcondition not satisfied (program.rs:14:9)"]
    _, single = solution_records["max_one_verified.rs"]
    assert single["verus"]["verified"] == 1 < checks.MIN_VERIFIED


def test_an_invalid_spec_text_is_a_recorded_refusal(sandbox):
    (record,) = checks.verify_solutions(
        [(read("bad_no_ensures.rs"), read("max_honest.rs"))], SETTINGS, sandbox
    )
    assert record == {"verified": False, "reason": "spec:no_ensures", "screen": None, "verus": None}


def test_spec_objects_are_accepted_and_nothing_runs_for_screened_out_answers(sandbox):
    class NoRuns:
        """TEST DOUBLE for a sandbox that must not be used."""

        workers = 1

        def run_command(self, *args, **kwargs):
            raise AssertionError("Verus was run for an answer the screen refused")

    records = checks.verify_solutions(
        [(parse_spec(read("spec_max.rs")), read("h_admit.rs"))], SETTINGS, NoRuns()
    )
    assert records[0]["reason"] == "screen:admit"


@pytest.mark.parametrize(
    "status,verified,check,outcome",
    [
        ("verified", 2, "validity", "verified"),
        ("verified", 0, "validity", "inconclusive"),
        ("failed", 1, "postconditions", "refuted"),
        ("compile_error", 0, "validity", "refuted"),
        ("compile_error", 0, "preconditions", "inconclusive"),
        ("timeout", 0, "validity", "inconclusive"),
        ("crash", 0, "postconditions", "inconclusive"),
    ],
)
def test_outcome_of(status, verified, check, outcome):
    assert checks.outcome_of(VerusVerdict("x", status, verified=verified), check) == outcome


def test_spec_target_name_needs_no_verus():
    assert checks.spec_target_name(read("spec_max.rs")) == "max_element"
    assert checks.spec_target_name(read("bad_two_targets.rs")) is None


def test_settings_are_importable_where_the_track_looks_for_them():
    from selfplay.verus.runner import VerusSettings as FromRunner

    assert FromRunner is VerusSettings
    s = FromRunner(
        **{"command": ["verus"], "extra_args": ["--expand-errors"], "env": {"RUSTUP_HOME": "/opt/rustup"}}
    )
    assert s.command == ("verus",) and s.env == (("RUSTUP_HOME", "/opt/rustup"),)
