"""Tokens each generation job of a paper config can generate, and how fast a GPU makes them.

Per generation rule, :func:`job_tokens` gives one job's bound, prompts x samples x
``max_new_tokens``, from the config and, where the number of prompts is only known once
the run has made its data, from the paper's own counts (each named below). The plan
multiplies by :data:`selfplay.plan.estimate.EXPECTED_FRACTION` for its estimate; where
the paper measured how many of the bound's prompts a run actually makes (PSV's pool
grows by the unique valid proposals only), the rule also gives that expected count.

:func:`tokens_per_s` is one job's vLLM output rate: public measurements of vLLM on one
A100 80GB (:data:`ANCHORS`), interpolated in the parameters each GPU holds (active ones
for a mixture of experts), and scaled to the job's GPU by memory bandwidth (decoding a
batch reads the weights and the KV cache once per step). A rough guide, not a measurement
of this project's jobs, which run nowhere here on a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .gpu_memory import Architecture, architecture

# Output tokens/s of vLLM (default settings) on one A100 80GB, by model size (billions of
# parameters): DeepSeek-R1-Distill-Qwen-7B 3,363, -14B 3,004, -32B 577, as tabulated on
# https://www.morphllm.com/vllm-benchmarks ("Throughput Benchmarks", third-party numbers
# published 2025-2026; read through this project's stored-pages search, not re-measured).
ANCHORS = [(7.61, 3363.0), (14.8, 3004.0), (32.8, 577.0)]
ANCHOR_GBPS = 2039.0  # A100 80GB SXM memory bandwidth (NVIDIA datasheet)
# Memory bandwidth, GB/s, NVIDIA datasheets (SXM where a card has two forms).
BANDWIDTH_GBPS = {
    "a100": 1555.0,
    "a10040": 1555.0,
    "a10080": 2039.0,
    "h100": 3350.0,
    "h10080": 3350.0,
    "h100nvl": 3900.0,
    "h200": 4800.0,
    "l40s": 864.0,
    "l40": 864.0,
    "a40": 696.0,
    "a6000": 768.0,
    "l4": 300.0,
    "a10": 600.0,
    "v100": 900.0,
}
# Active parameters of a mixture of experts (model card: "3.3B activated").
ACTIVE_B = {"Qwen/Qwen3-30B-A3B": 3.3}

# Problem counts the papers state, for steps whose inputs exist only once the run has made them.
EVOLVE_PROBLEMS = (30437, "paper 002 Table 1: 30,437 seed problems after de-duplication")
PSV_SETS = {"dafny2verus": 271, "mbpp": 78, "humaneval": 85}  # paper 003 Sec. 4 (docs/psv-data.md)
# The share of an iteration's B proposals that join the pool (spec-valid and unique).
PSV_UNIQUE_VALID = (
    0.054,
    "paper 003 App. H: of 10,000 proposals an iteration ~27.5% pass the spec check and ~5.4% "
    "(~540) are unique valid specifications",
)


def tokens_per_s(spec: Mapping, gpu: str | None, tp: int = 1, workdir: str = ".") -> tuple[float, str]:
    """One job's output tokens/s for model ``spec`` on GPU type ``gpu`` (None: the anchor's)."""
    arch: Architecture = architecture(spec, f"{workdir}/resources/models/{spec.get('name')}")
    size = ACTIVE_B.get(str(spec.get("path")), arch.params_b) / tp
    if size <= ANCHORS[0][0]:
        rate = ANCHORS[0][1]  # smaller models: no faster than the smallest anchor (conservative)
    elif size >= ANCHORS[-1][0]:
        rate = ANCHORS[-1][1] * ANCHORS[-1][0] / size
    else:
        (x0, y0), (x1, y1) = next((a, b) for a, b in zip(ANCHORS, ANCHORS[1:]) if a[0] <= size <= b[0])
        w = (math.log(size) - math.log(x0)) / (math.log(x1) - math.log(x0))
        rate = math.exp(math.log(y0) + w * (math.log(y1) - math.log(y0)))
    from .gpu_memory import _norm

    bw = BANDWIDTH_GBPS.get(_norm(gpu)) if gpu else None
    if bw:
        rate *= bw / ANCHOR_GBPS
    return rate, f"{size:.1f}B per GPU on {gpu or 'an A100 80GB'}"


def _sampling(section: Mapping) -> int:
    return int(section["sampling"]["max_new_tokens"])


JobTokens = tuple[Callable[[Mapping], int], str]


def job_tokens(cfg: Mapping[str, Any]) -> dict[str, JobTokens]:
    """Per generation rule that runs a model on the cluster's GPUs: (wildcards -> one job's
    token bound, how it is counted). Models served elsewhere (API calls from local client
    jobs) hold no GPU and are left out."""
    out: dict[str, JobTokens] = {}
    if "evolve" in cfg:
        e = cfg["evolve"]
        n, source = EVOLVE_PROBLEMS
        samples = {m["name"]: int(m["samples"]) for m in e["pool"]["models"]}
        out["evolve_refine"] = (lambda w: n * _sampling(e["refine"]), f"{source}, one refinement each")
        shards = int(e["pool"].get("shards", 1))
        out["evolve_pool_generate"] = (
            lambda w: math.ceil(n / shards) * samples[w["pmodel"]] * _sampling(e["pool"]),
            f"{source} / evolve.pool.shards x the model's samples",
        )
        test_shards = int(e.get("test_shards", 1))
        out["evolve_generate"] = (
            lambda w: (
                math.ceil(n / test_shards) * (_sampling(e["adversarial"]) + _sampling(e["discriminative"]))
            ),
            f"{source} / evolve.test_shards, one adversarial and one discriminative request each",
        )
        if e.get("generator_served"):  # refinement and tests from a served model (evolve.generator_served)
            del out["evolve_refine"], out["evolve_generate"]
    if "seq" in cfg:
        s = cfg["seq"]
        per_round, p_seq = int(s["sources"]["per_round"]), float(s["game"]["seq_probability"])
        shards = int(s["shards"])

        def count(w):  # sources of one shard of the stage
            stage = w.get("stage", "round1")
            total = per_round if stage.startswith("round") else int(s["sources"].get(stage, 0) or 0)
            return math.ceil(total / shards)

        out["seq_alice_generate"] = (
            lambda w: count(w) * int(s["alice"]["samples_per_source"]) * _sampling(s["alice"]),
            "sources per round (seq.sources) / shards",
        )
        out["seq_proof_generate"] = (
            lambda w: math.ceil(count(w) * p_seq) * _sampling(s["proof"]),
            "SEQ instances (seq.game.seq_probability) of a shard, one request per attempt",
        )
        out["seq_bob_generate"] = (
            lambda w: count(w) * int(s["bob"]["samples"]) * _sampling(s["bob"]),
            "candidates of a shard x Bob's samples",
        )
        out["seq_translate_generate"] = (
            lambda w: int(s["sources"]["opinstruct_limit"]) * _sampling(s["translate"]),
            "seq.sources.opinstruct_limit programs",
        )
    if "psv" in cfg:
        p = cfg["psv"]
        out["psv_propose"] = (
            lambda w: _psv_budget(p, w) * _sampling(p["propose"]),
            "the method's proposal budget (psv.propose.budget), one request each",
        )
        out["psv_solve"] = (
            lambda w: _psv_pool(p, w) * int(p["solve"]["samples"]) * _sampling(p["solve"]),
            "X_t: the seed set (paper 003 Sec. 4 sizes) plus t budgets of proposals, x k_trn",
        )
        out["psv_eval_generate"] = (
            lambda w: (
                PSV_SETS.get(w.get("pset", ""), 271)
                * int(p["evaluation"]["samples"])
                * _sampling(p["evaluation"])
            ),
            "the evaluated set (paper 003 Sec. 4 sizes) x n",
        )
    if "gasp" in cfg:
        g = cfg["gasp"]
        t, st, sv, rd = g["teacher"], g["student"], g["solver"], g["real_data"]
        per_phase = (
            int(t["candidates_per_attempt"]) * int(t["max_attempts"])
            if t["count"] == "generations"
            else int(t["max_attempts"])
        )
        # a teacher phase's bound: every attempt spent, each candidate tried N times by the student
        out["gasp_teacher_phase"] = (
            lambda w: per_phase * (_sampling(t) + int(st["samples"]) * _sampling(st)),
            "candidates_per_attempt x max_attempts (all attempts spent), each proposal plus N student tries",
        )
        accepted = 2 * int(t["target_accepted"])
        out["gasp_solver_phase"] = (
            lambda w: accepted * int(sv["samples"]) * _sampling(sv),
            "M accepted lemmas + M lifts, solver samples each",
        )
        out["gasp_real_phase"] = (
            lambda w: int(rd["problems_per_iteration"]) * int(rd["samples"]) * _sampling(rd),
            "real_data.problems_per_iteration x samples",
        )
        modes = cfg["evaluation"]["modes"]
        out["gasp_eval_generate"] = (
            lambda w: (
                GASP_ITEMS.get(w["bench"], GASP_ITEMS["livecodebench"])[0]
                * int(modes[w["mode"]]["samples"])
                * _sampling(modes[w["mode"]])
            ),
            "the benchmark's items ("
            + "; ".join(f"{b} {n} ({src})" for b, (n, src) in GASP_ITEMS.items())
            + ") x the mode's samples",
        )
    return out


def _psv_pool(p: Mapping, w: Mapping, share: float = 1.0) -> int:
    """X_t's size in the job ``w`` names: the seed set, plus ``share`` of each earlier
    iteration's budget of proposals (1: every proposal joined the pool, the bound); a
    method that proposes nothing (RFT, the baselines) keeps the seed set."""
    seed_set = (p["settings"].get(w.get("setting", "")) or {}).get("seed_set", "")
    seed = PSV_SETS.get(seed_set, max(PSV_SETS.values()))
    name = w.get("method", "")
    method = p["methods"].get(name) or {}
    if name not in p["methods"] or method.get("propose", True) is False:  # base, fewshot: no loop
        return seed
    return seed + math.ceil(int(w.get("t", 0)) * _psv_budget(p, w) * share)


def _psv_budget(p: Mapping, w: Mapping) -> int:
    """B of the method in the job ``w`` names (its own, or psv.propose.budget)."""
    return int((p["methods"].get(w.get("method", "")) or {}).get("budget", p["propose"]["budget"]))


def expected_job_tokens(cfg: Mapping[str, Any]) -> dict[str, JobTokens]:
    """Per generation rule whose prompts the paper counted below the bound of
    :func:`job_tokens`: (wildcards -> the tokens at every answer's limit for the prompts
    expected, how they are counted)."""
    out: dict[str, JobTokens] = {}
    if "psv" in cfg:
        p = cfg["psv"]
        share, source = PSV_UNIQUE_VALID
        out["psv_solve"] = (
            lambda w: _psv_pool(p, w, share) * int(p["solve"]["samples"]) * _sampling(p["solve"]),
            f"X_t grows by {share:.1%} of each iteration's budget ({source})",
        )
    return out


# Items of the benchmarks GASP's checkpoints are scored on, paper scale.
GASP_ITEMS = {
    "livecodebench": (216, "paper 004 Sec. 4: LCB v5, 2024.10-2025.02"),
    "gasp_goalposts": (146, "paper 004 Sec. 3.2: the goalposts"),
    "gasp_train": (601, "paper 004 Sec. 3.2: the training split before 2024.08"),
    "humaneval_plus": (164, "HumanEval+"),
    "mbpp_plus": (378, "MBPP+ v0.2"),
}


# Pass-matrix cells (one solution on one test) per second per sandbox worker, measured here:
# bench/results/pass_matrix.md (2026-11-26, 2 workers, 1-s limit per test): 92.8 cells/s
# with one solution of 16 timing out on 3 of 20 tests, 338.9 without it. Per worker, the
# slower figure (a pool always holds some slow solutions; the paper config's 4-s limit
# makes each timeout 4x dearer, so this is still optimistic where many time out).
MATRIX_CELLS_PER_S_PER_WORKER = (
    92.8 / 2,
    "bench/results/pass_matrix.md: 92.8 cells/s on 2 workers, a pool with a slow solution, 1-s limit",
)


def matrix_cells(cfg: Mapping[str, Any]) -> Callable[[Mapping], int] | None:
    """Cells one evolve_matrix job judges (round 0: every refined test; later rounds only
    the new ones): its block of the problems (evolve.matrix.shards) x pool solutions x tests."""
    if "evolve" not in cfg:
        return None
    e = cfg["evolve"]
    n = math.ceil(EVOLVE_PROBLEMS[0] / int(e["matrix"].get("shards", 1)))
    solutions = sum(int(m["samples"]) for m in e["pool"]["models"])
    new_tests = int(e["adversarial"]["tests"]) + int(e["discriminative"]["tests"])
    return lambda w: n * solutions * (int(e["refine"]["tests"]) if int(w.get("er", 0)) == 0 else new_tests)
