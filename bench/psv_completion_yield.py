"""The embedded default's PSV solver in both answer formats (psv.solve.completion):
the default model (a local HF folder) solves the trivial seed problems with the
default's sampling and format constraints, 8 samples each, and real Dafny scores the
answers. Prints, per format, parsed / verified counts and the refusal reasons.

    flock /tmp/selfplay-heavy.lock .venv/bin/python bench/psv_completion_yield.py MODEL_DIR [OUT_DIR]

Measured 2026-11-26 on the 2-core machine with SmolLM2-135M-Instruct (tests' tiny
model): full_program 2 of 32 verified, body 1 of 32 (the same four problems).
"""

from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

import yaml

from selfplay.config import validate_config
from selfplay.data.dafny_problems import load_problems
from selfplay.pipeline import psv
from selfplay.records import read_jsonl, write_jsonl

REPO = Path(__file__).resolve().parents[1]


def main(model: str, out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    problems = [p for p in load_problems("seed") if p["difficulty"] == "trivial"]
    pool = out / "pool.jsonl"
    write_jsonl(pool, [{k: p[k] for k in ("id", "name", "target", "spec")} for p in problems])
    for completion in ("full_program", "body"):
        cfg = copy.deepcopy(base)
        cfg["psv"]["solve"].update(completion=completion, samples=8)
        gens, scored = out / f"{completion}_solve.jsonl", out / f"{completion}_solutions.jsonl"
        psv.solve_generate(cfg, "base/seed1", str(pool), model, None, str(gens))
        stats = psv.score_generations(cfg, str(gens), str(pool), str(scored))
        reasons: dict[str, int] = {}
        for row in read_jsonl(scored):
            for s in row["samples"]:
                reasons[s["reason"] or "verified"] = reasons.get(s["reason"] or "verified", 0) + 1
        print(completion, stats, dict(sorted(reasons.items())), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="psv_yield_"))
