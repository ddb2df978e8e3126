#!/usr/bin/env python3
"""TEST DOUBLE for the `verus` executable, which cannot be installed on the test machines.

It stands in for Verus in the runner tests: the runner starts it through the real
sandbox exactly as it would start Verus, and this double replays one of the outputs
recorded (by us, in Verus's formats) under tests/verus_recorded/<case>/: stdout and
stderr for a run with --output-json (json/) or without (plain/), the exit code, and an
optional sleep (case.json). It never verifies anything.

Usage, as Verus: fake_verus.py FILE.rs --multiple-errors N [--output-json]
[--rlimit N] [--other-flags]. FILE.rs must exist and --multiple-errors must be given an
integer, otherwise it exits 2 with "fake verus: ..." on stderr (so a runner that builds
a wrong command line is caught). `--version` prints a version line.

Which recording is replayed (first rule that applies):

1. the environment variable FAKE_VERUS_FORCE=<case> (used to simulate a flaky machine);
2. a marker comment in the file naming the kind of file it is:
   `FAKE_VERUS_VALIDITY: <case>`, `FAKE_VERUS_PRECONDITIONS: <case>`,
   `FAKE_VERUS_POSTCONDITIONS: <case>` (for the spec-check files of
   selfplay.verus.spec_files) or `FAKE_VERUS_SOLUTION: <case>`;
3. a marker `FAKE_VERUS: <case>` anywhere in the file;
4. the verifier canary's two files (selfplay.verifier_canary), by the function they
   define: `canary_max` (its body meets its ensures) -> verified, `canary_max_wrong`
   (it returns its first argument) -> verification_errors, as real Verus answers;
5. by the kind of file: a validity file (an external_body stub with `assume(false);`
   and `arbitrary()`) -> verified; a preconditions file (`assert(false)` and
   `vstd::pervasive::unreached()`) -> verification_errors; a postconditions file
   (`selfplay_arbitrary_value`) -> verification_errors; anything else (a solution) ->
   verified. So a spec without markers passes the spec check, and markers make a spec
   vacuous or invalid.

The recorded `{FILE}` placeholders are replaced with FILE as given.
"""

import json
import os
import re
import sys
import time
from pathlib import Path

RECORDED = Path(__file__).resolve().parent.parent / "verus_recorded"
VALUE_OPTIONS = {"--multiple-errors", "--rlimit", "--num-threads"}


def usage(message: str) -> None:
    print(f"fake verus: {message}", file=sys.stderr)
    sys.exit(2)


def kind_of(text: str) -> str:
    if "#[verifier::external_body]" in text and "assume(false);" in text and "arbitrary()" in text:
        return "validity"
    if "assert(false)" in text and "vstd::pervasive::unreached()" in text:
        return "preconditions"
    if "selfplay_arbitrary_value" in text:
        return "postconditions"
    return "solution"


CANARY = {"canary_max": "verified", "canary_max_wrong": "verification_errors"}
DEFAULTS = {
    "validity": "verified",
    "preconditions": "verification_errors",
    "postconditions": "verification_errors",
    "solution": "verified",
}


def main(argv: list[str]) -> None:
    if argv == ["--version"]:
        print("Verus\n  Version: 0.2026.09.16.7325eee (fake)")
        return
    files: list[str] = []
    options: dict[str, str | None] = {}
    k = 0
    while k < len(argv):
        arg = argv[k]
        if arg in VALUE_OPTIONS:
            if k + 1 >= len(argv) or not argv[k + 1].isdigit():
                usage(f"{arg} needs an integer")
            options[arg] = argv[k + 1]
            k += 2
            continue
        if arg.startswith("--"):
            options[arg] = None
        else:
            files.append(arg)
        k += 1
    if len(files) != 1 or not files[0].endswith(".rs"):
        usage(f"expected exactly one .rs file, got {files}")
    if "--multiple-errors" not in options:
        usage("--multiple-errors was not given")
    path = Path(files[0])
    if not path.is_file():
        usage(f"no such file {files[0]}")
    text = path.read_text()
    kind = kind_of(text)
    case = os.environ.get("FAKE_VERUS_FORCE")
    if not case:
        m = re.search(rf"FAKE_VERUS_{kind.upper()}:\s*([a-z_]+)", text) or re.search(
            r"FAKE_VERUS:\s*([a-z_]+)", text
        )
        canary = re.search(r"\bfn (canary_max|canary_max_wrong)\(", text)
        if m:
            case = m.group(1)
        elif canary:
            case = CANARY[canary.group(1)]
        else:
            case = DEFAULTS[kind]
    folder = RECORDED / case
    if not (folder / "case.json").is_file():
        usage(f"no recording named {case!r}")
    meta = json.loads((folder / "case.json").read_text())
    mode = "json" if "--output-json" in options else "plain"
    if meta.get("sleep_s"):
        time.sleep(float(meta["sleep_s"]))
    sys.stdout.write((folder / mode / "stdout").read_text().replace("{FILE}", files[0]))
    sys.stderr.write((folder / mode / "stderr").read_text().replace("{FILE}", files[0]))
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(int(meta["exit_code"]))


if __name__ == "__main__":
    main(sys.argv[1:])
