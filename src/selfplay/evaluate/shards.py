"""Sharding a benchmark cell's generation into several GPU jobs, and sizing them.

A cell is one (benchmark, model, mode) of a track: every item answered ``samples`` times
with up to ``max_new_tokens`` tokens each. At paper scale one cell can be ~180M tokens
(paper 000: CodeXGLUE's 2,732 functions x 16 samples x 4,096 tokens), far more than one
job can generate within a cluster's time limit. Config
``evaluation.benchmarks.<bench>.shards`` (default 1) splits every cell of that
benchmark into that many generation jobs:

- shard ``k`` of ``n`` answers the items at positions ``k, k + n, k + 2n, ...`` of the
  cell's items (:func:`selfplay.tracks.stages.shard_of`, the tracks' own shard split;
  interleaved, so a benchmark whose items are grouped by category gives every job a
  share of each category);
- each item's sampling seed is derived from the item alone (benchmark, mode, model,
  item id: :func:`selfplay.pipeline.evaluate.eval_request`), never from its shard or
  batch, so a shard's answers are the answers the unsharded job would give;
- a merge puts the shards' records back in item order (:func:`merge_records`), which
  checks that every item was answered exactly once; scoring reads the merged file, so
  the scores equal the unsharded cell's byte for byte.

The number of jobs has to be known when the plan is made, before the items are
prepared (their count comes from a download or a file the user supplies), so it is a
config value rather than derived from the items. The paper configs size it with
:func:`cell_tokens` from each benchmark's release size (``release_items`` of its
adapter) against :func:`job_token_budget` of ``resources.generate.runtime``; a test
checks every cell of every paper config against that budget.

Models served elsewhere (``<track>.benchmarks.other_models``) are sampled by local HTTP
clients, which hold no GPU and no cluster time limit: their cells stay one job.
"""

from __future__ import annotations

import math

from ..errors import UserError

# Generated tokens per second of one one-GPU vLLM job of a 7B model sampling long answers,
# for sizing jobs (not measured here: no GPU in this project's CI). A third-party
# benchmark reports 3,363 tokens/s for DeepSeek-R1-Distill-Qwen-7B (paper 000's model) on
# one A100 80GB with vLLM's defaults (morphllm.com/vllm-benchmarks). Decoding is bound by
# memory bandwidth, and paper 000 ran on L40S GPUs, with 864 GB/s against the A100's
# 2,039 GB/s: about 1,400 tokens/s. We plan with 1,000, which leaves room for the prompts'
# prefill, LoRA adapters and answers near the token limit, which shrink the batch.
PLANNING_TOKENS_PER_S = 1000
# Minutes of a generation job not spent generating: loading the model and its adapter,
# CUDA graphs, writing the records.
STARTUP_MIN = 15


def shard_count(cfg: dict, name: str) -> int:
    """How many generation jobs each cell of benchmark ``name`` is split into."""
    value = cfg["evaluation"]["benchmarks"][name].get("shards", 1)
    if isinstance(value, float) and value.is_integer():  # JSON schema's integers include 2.0
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            f"config key evaluation.benchmarks.{name}.shards: must be an integer >= 1, got {value!r}"
        )
    return value


def check_shard(cfg: dict, name: str, shard: int, shards: int) -> None:
    """A shard job belongs to the configured split (a file asked for by hand may not)."""
    configured = shard_count(cfg, name)
    if shards != configured:
        raise UserError(
            f"config key evaluation.benchmarks.{name}.shards is {configured}, but this job is "
            f"shard {shard} of {shards}; ask for the cell's merged file instead"
        )
    if not 0 <= shard < shards:
        raise UserError(f"{name}: shard {shard} is outside 0..{shards - 1}")


def merge_records(shard_records: list[list[dict]], item_ids: list[str], what: str) -> list[dict]:
    """The shards' records in the order of ``item_ids`` (the cell's items), one per item;
    refuses a merge where an item is missing, answered twice or unknown (a shard made
    for another item set or split)."""
    by_item: dict[str, dict] = {}
    for k, records in enumerate(shard_records):
        for rec in records:
            item = rec["meta"]["item"]
            if item in by_item:
                raise UserError(
                    f"{what}: item {item} is answered twice (again in shard {k}); regenerate the shards"
                )
            by_item[item] = rec
    unknown = sorted(set(by_item) - set(item_ids))
    missing = [i for i in item_ids if i not in by_item]
    if unknown or missing:
        raise UserError(
            f"{what}: the shards do not answer the cell's items ({len(missing)} missing, e.g. "
            f"{(missing or ['-'])[0]}; {len(unknown)} unknown, e.g. {(unknown or ['-'])[0]}); "
            "regenerate the shards"
        )
    return [by_item[i] for i in item_ids]


# --- sizing the jobs ------------------------------------------------------------------


def cell_tokens(items: int, samples: int, max_new_tokens: int) -> int:
    """The most tokens one cell generates: every sample of every item at its limit."""
    return int(items) * int(samples) * int(max_new_tokens)


def tokens_per_job(items: int, samples: int, max_new_tokens: int, shards: int) -> int:
    """The most tokens the largest of a cell's ``shards`` jobs generates."""
    return cell_tokens(math.ceil(int(items) / int(shards)), samples, max_new_tokens)


def job_token_budget(
    runtime_min: float, tokens_per_s: float = PLANNING_TOKENS_PER_S, startup_min: float = STARTUP_MIN
) -> int:
    """Tokens one generation job can generate within ``runtime_min`` minutes (SLURM's
    time limit, config ``resources.generate.runtime``)."""
    return int(tokens_per_s * max(0.0, float(runtime_min) - startup_min) * 60)


def planned_items(cfg: dict, name: str) -> int | None:
    """The most items benchmark ``name`` has under ``cfg``: its paper-scale release size
    (LiveCodeBench: the window's count the config expects), None when unknown."""
    from .registry import benchmark

    settings = cfg["evaluation"]["benchmarks"][name]
    counts = settings.get("paper_counts") or {}
    return counts.get("eval") or benchmark(name).release_items


def cell_plan(cfg: dict, track: str) -> list[dict]:
    """Per evaluation cell of ``track`` that its GPU jobs generate (models served elsewhere
    are left out): the items, samples, token limit, shards and tokens, and the largest
    job's tokens."""
    from .modes import mode_of
    from .settings import other_model, track_runs

    out = []
    for name, mode_name, model in track_runs(cfg[track]):
        if other_model(cfg[track], model):
            continue
        mode = mode_of(cfg, mode_name)
        limit = cfg["evaluation"]["benchmarks"][name].get("max_new_tokens") or mode.sampling["max_new_tokens"]
        items, shards = planned_items(cfg, name), shard_count(cfg, name)
        out.append(
            {
                "benchmark": name,
                "mode": mode_name,
                "model": model,
                "items": items,
                "samples": mode.samples,
                "max_new_tokens": int(limit),
                "shards": shards,
                "tokens": None if items is None else cell_tokens(items, mode.samples, limit),
                "tokens_per_job": None
                if items is None
                else tokens_per_job(items, mode.samples, limit, shards),
            }
        )
    return out
