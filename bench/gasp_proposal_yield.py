"""The embedded default's GASP lemma proposals under the two proposal skeletons
(tracks/gasp/formats.py, ``parameters``): the free one (``0``: the model writes the
parameter list and each input's argument count) and the matched signature (``3``: 1 to
3 plain parameter names, every input giving exactly as many arguments). The default
model (a local HF folder) writes lemma proposals for the shipped goalposts, both
difficulty axes in turn, with the default config's teacher sampling (or
``--temperature``); each proposal is parsed and checked for validity in the sandbox as
the lemma phase does. Writes bench/results/gasp_proposal_yield.{json,md}: per skeleton,
proposed / parsed / valid and the reasons.

    flock /tmp/selfplay-heavy.lock .venv/bin/python bench/gasp_proposal_yield.py MODEL_DIR [--n 32]

Measured 2026-11-28 on the 2-core machine with SmolLM2-135M-Instruct at the default's
temperature 1.0: free 17 of 32 parsed, 0 valid (14 TypeErrors, 2 NameErrors); matched 19
parsed, 1 valid (10 TypeErrors, 5 NameErrors, all inside the function's own code). The
skeleton removes the failures of form; the tiny model's code is what still fails.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import Counter
from pathlib import Path

import yaml

from selfplay.config import validate_config
from selfplay.llm.base import GenerationRequest, SamplingParams
from selfplay.llm.factory import make_backend
from selfplay.tracks.gasp import parse, validity
from selfplay.tracks.gasp.formats import proposal_format
from selfplay.tracks.gasp.goalposts import load_goalposts
from selfplay.tracks.gasp.prompts import AXES, lemma_messages

REPO = Path(__file__).resolve().parents[1]
SKELETONS = {"free": 0, "matched": 3}


def _reason(verdict) -> str:
    """``valid``, or the invalid reason's class; for a raise also the exception's type (a
    call of the wrong arity is a TypeError, an unimported annotation a NameError)."""
    if verdict.valid:
        return "valid"
    parts = (verdict.reason or "").split(":")
    return ":".join(parts[:2]) if parts[0] == "raises" else parts[0]


def measure(backend, teacher: dict, val_cfg: dict, parameters: int, n: int, temperature: float) -> dict:
    goalposts = load_goalposts()
    fmt = proposal_format({**teacher["answer_format"], "parameters": parameters})
    sampling = teacher["sampling"]
    requests = [
        GenerationRequest(
            lemma_messages(goalposts[i % len(goalposts)], AXES[(i // len(goalposts)) % len(AXES)]),
            SamplingParams(
                temperature=temperature,
                top_p=sampling["top_p"],
                max_new_tokens=sampling["max_new_tokens"],
                seed=1000 + i,
            ),
            answer_format=fmt,
        )
        for i in range(n)
    ]
    start = time.perf_counter()
    texts = [out[0] for out in backend.generate(requests)]
    seconds = time.perf_counter() - start
    reasons: Counter = Counter()
    proposals = []
    for text in texts:
        proposal, why = parse.parse_proposal(text)
        if proposal is None:
            reasons[f"parse:{why}"] += 1
        else:
            proposals.append(proposal)
    settings = validity.ValiditySettings.from_dict(val_cfg, "gasp.validity")
    with validity.seeded_sandboxes(settings, workers=2) as pools:
        verdicts = validity.check_proposals(proposals, pools, settings) if proposals else []
    reasons.update(_reason(v) for v in verdicts)
    return {
        "parameters": parameters,
        "proposed": n,
        "parsed": len(proposals),
        "valid": sum(v.valid for v in verdicts),
        "reasons": dict(sorted(reasons.items())),
        "generate_s": round(seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--n", type=int, default=32, help="proposals per skeleton")
    ap.add_argument("--temperature", type=float, help="default: the config's teacher temperature")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "gasp_proposal_yield"))
    args = ap.parse_args()
    cfg = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    teacher = cfg["gasp"]["teacher"]
    temperature = teacher["sampling"]["temperature"] if args.temperature is None else args.temperature
    backend = make_backend({"name": "transformers", "model": args.model, "threads": 2, "progress": False})
    rows = {}
    for name, parameters in SKELETONS.items():
        rows[name] = measure(backend, teacher, cfg["gasp"]["validity"], parameters, args.n, temperature)
        print(name, rows[name], flush=True)
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "model": Path(args.model).name,
        "temperature": temperature,
        "max_new_tokens": teacher["sampling"]["max_new_tokens"],
        "skeletons": rows,
    }
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# GASP lemma proposals: free vs matched-signature skeleton",
        "",
        f"{result['date']}, {result['machine']}, {result['model']}, temperature {temperature}, "
        f"{result['max_new_tokens']} new tokens at most, the shipped goalposts and both axes in turn; "
        "`bench/gasp_proposal_yield.py`.",
        "",
        "| skeleton | parameters | proposed | parsed | valid | reasons | generation s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        why = ", ".join(f"{k} {v}" for k, v in r["reasons"].items())
        lines.append(
            f"| {name} | {r['parameters']} | {r['proposed']} | {r['parsed']} | {r['valid']} | {why} | {r['generate_s']} |"
        )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
