"""Reading Verus's output into a status (pure text: the recordings under
tests/verus_recorded/, which are written by us in Verus's formats, see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.verus.output import diagnostics, find_json_summary, read_output, text_summaries

RECORDED = Path(__file__).parent / "verus_recorded"


def recorded(case: str, mode: str) -> tuple[str, str, int]:
    folder = RECORDED / case
    exit_code = json.loads((folder / "case.json").read_text())["exit_code"]
    out = (folder / mode / "stdout").read_text().replace("{FILE}", "program.rs")
    err = (folder / mode / "stderr").read_text().replace("{FILE}", "program.rs")
    return out, err, exit_code


@pytest.mark.parametrize(
    "case,mode,status,verified,errors,source",
    [
        ("verified", "json", "verified", 2, 0, "json"),
        ("verified", "plain", "verified", 2, 0, "text"),
        ("verified_stdout_summary", "json", "verified", 2, 0, "json"),
        ("verified_stdout_summary", "plain", "verified", 2, 0, "text"),
        ("verified_single", "json", "verified", 1, 0, "json"),
        ("verification_errors", "json", "failed", 1, 1, "json"),
        ("verification_errors", "plain", "failed", 1, 1, "text"),
        ("syntax_error", "json", "compile_error", 0, 0, "json"),
        ("syntax_error", "plain", "compile_error", 0, 0, "text"),
        ("vir_error", "json", "compile_error", None, None, "json"),
        ("vir_error", "plain", "compile_error", None, None, None),
    ],
)
def test_recorded_outcomes(case, mode, status, verified, errors, source):
    reading = read_output(*recorded(case, mode))
    assert (reading.status, reading.verified, reading.errors, reading.source) == (
        status,
        verified,
        errors,
        source,
    )
    assert reading.problems == [] and reading.crash is None


def test_error_messages_carry_their_location():
    reading = read_output(*recorded("verification_errors", "json"))
    assert reading.messages == ["error: postcondition not satisfied (program.rs:14:9)"]
    assert diagnostics(
        "error[E0308]: mismatched types\n  --> f.rs:3:9\nerror: aborting due to 1 previous error\n"
    ) == ["error[E0308]: mismatched types (f.rs:3:9)"]


@pytest.mark.parametrize("mode", ["json", "plain"])
def test_panic_is_a_crash_worth_retrying(mode):
    reading = read_output(*recorded("rustc_panic", mode))
    assert reading.status == "crash"
    assert reading.crash == "thread 'rustc' (48213) panicked at rust_verify/src/rust_to_vir_expr.rs:1421:17:"


@pytest.mark.parametrize(
    "stderr",
    [
        "thread 'rustc' panicked at 'verification failed', rust_verify/src/driver.rs:200:9\n",
        "error: internal compiler error: unexpected panic\n",
        "thread 'rustc' has overflowed its stack\n",
        "Internal Verus Error: The thir_body query is running\n",
    ],
)
def test_other_known_crash_forms(stderr):
    out, _, _ = recorded("verified", "json")
    reading = read_output(out, stderr, 0)  # even next to a clean summary: a panic voids the run
    assert reading.status == "crash" and reading.crash is not None


def _json(**results) -> str:
    return json.dumps({"verification-results": results, "verus": {"version": "x"}}, indent=2) + "\n"


CLEAN = dict(success=True, verified=2, errors=0)
CLEAN.update({"encountered-vir-error": False, "encountered-error": False, "is-verifying-entire-crate": True})


@pytest.mark.parametrize(
    "stdout,stderr,exit_code,why",
    [
        (_json(**CLEAN), "", 1, "exit code 1 with a clean summary"),
        (
            _json(**{**CLEAN, "errors": 1, "success": False}),
            "error: assertion failed\n",
            0,
            "errors but exit code 0",
        ),
        (_json(**{**CLEAN, "success": False}), "", 0, "reports a failure"),
        (_json(**CLEAN), "error: assertion failed\n", 0, "error diagnostics but a clean summary"),
        (_json(**{**CLEAN, "is-verifying-entire-crate": False}), "", 0, "only part of the file"),
        (_json(**{**CLEAN, "verified": True}), "", 0, "lacks its verified/errors counts"),
        (_json(success=True, verified=2, errors=0), "", 0, "lacks encountered-vir-error"),
        (_json(**CLEAN), "verification results:: 1 verified, 0 errors\n", 0, "the JSON 2, 0"),
        ('{\n  "verification-results": {\n', "", 0, "no readable JSON summary"),
        (
            "verification results:: 2 verified, 0 errors\n",
            "verification results:: 1 verified, 1 errors\n",
            1,
            "summary lines disagree",
        ),
        ("", "verification results:: 0 verified, 2 errors\n", 0, "errors but exit code 0"),
        ("", "", 0, "no verification summary"),
        ("", "", 1, "no verification summary"),
        ("", "verification results:: 2 verified, 0 errors\n", 1, "exit code 1 with a clean summary"),
    ],
)
def test_inconsistent_output_is_not_trusted(stdout, stderr, exit_code, why):
    reading = read_output(stdout, stderr, exit_code)
    assert reading.status == "crash" and reading.crash is None
    assert any(why in p for p in reading.problems), reading.problems


def test_summary_line_forms():
    assert text_summaries(
        "verification results:: 3 verified, 1 error\n",
        "Verification results:: 7 verified, 0 errors\n",
        "verification results:: verified: 4 errors: 2\n",
    ) == [(3, 1), (7, 0), (4, 2)]
    assert text_summaries("no summary here") == []


def test_json_summary_is_found_after_other_output():
    out = "some note\n" + _json(**CLEAN)
    summary, problem = find_json_summary(out)
    assert problem is None and summary["verification-results"]["verified"] == 2
    assert find_json_summary('{"other": 1}\n') == (None, None)


def test_long_message_lists_are_bounded():
    stderr = "".join(f"error: assertion failed\n  --> f.rs:{i}:1\n" for i in range(70))
    reading = read_output(_json(**{**CLEAN, "success": False, "errors": 70}), stderr, 1)
    assert (
        reading.status == "failed" and len(reading.messages) == 51 and reading.messages[-1] == "... 20 more"
    )
