"""Dress rehearsal of paper 002 (config/papers/evolve.yaml, EvolveCoder), issue 19.

The paper config as shipped, with config/rehearsals/evolve.yaml on top (a tiny random
Qwen3 for the policy and the pool models, counts, vLLM's CPU build, the test cluster's job
sizes, shipped seed and benchmark files in their release formats; checked by
selfplay.config.rehearsal with the allowances in EXTRA), run to rule `all` (Tables 1-3,
the yield table, Figures 1, 2, 4, 5, 6) through the real local SLURM cluster with the
test profile. Everything else is the paper's: vLLM with the paper's sampling, the pass
matrices in the sandbox with the paper's time limit, the round filters, GRPO with full
fine-tuning and its learning rate, clip ratios and micro-batching, the seven benchmark
adapters, and Table 3 scoring each round's fully fine-tuned policy.

A randomly initialised model writes no refinement or program that the paper's filters
keep, so nothing would reach GRPO. The run therefore goes in three steps through the same
workflow and cluster: (1) seeds, embeddings and de-duplication; (2) the answers a capable
refiner and pool would give (the refined question and assert tests of each kept seed,
and per pool model eight programs, right or wrong) are PLANTED in the files of rules
evolve_refine and evolve_pool_generate, marked `planted` in each record, and round 0's
suites are built from them; (3) everything else to rule `all`: pass matrices, filters,
round 1's test writing (the paper's served generator, here the tiny Qwen3 on a real vLLM
server under its name: tests/vllm_server.py), GRPO per round and the benchmarks. The refinement and pool rules themselves on vLLM are what `make`-ing the
overlay without planting runs (the report of issue 19 gives its time).

Machinery: tests/rehearsal.py; run alone: `.venv/bin/python -m pytest -m rehearsal`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from rehearsal import LOCAL_VLLM_SERVER, OVERLAYS, PAPERS, TINY_CACHE, rehearse
from test_workflow_evolve import FUNCTIONS, NEAR, RIGHT, _refinement
from vllm_server import served

from selfplay.records import read_json, read_jsonl, write_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal]

EXP = "results/evolve/rehearsal"
PAPER = yaml.safe_load((PAPERS / "evolve.yaml").read_text())
OVERLAY = yaml.safe_load((OVERLAYS / "evolve.yaml").read_text())
# Keys beyond the checker's kinds that this paper's overlay changes, and why.
EXTRA = {
    "evolve.seeds.source": "data: the shipped seed files, in each source's release format, instead of downloading",
    "evolve.seeds.per_source": "count: problems per seed source",
    "evolve.grpo.max_completion_length": "count: rollout tokens",
}
# each pool model's eight programs for a problem: right (R), wrong on some inputs (N), always 7 (C)
POOL = {"qwen3-4b": "RNRCRNRR", "qwen3-32b": "NRCRRNRC"}


def _program(name: str, kind: str) -> str:
    body = {"R": RIGHT[name], "N": NEAR[name], "C": "7"}[kind]
    return f"```python\ndef {name}(x):\n    return {body}\n```"


def plant(path: Path, records: list[dict]) -> None:
    """A generation file as its rule writes it, each record marked as planted (no backend ran)."""
    write_jsonl(path, [{**r, "backend": {"name": "planted"}, "planted": True} for r in records])


@pytest.fixture(scope="module")
def generator_server(tmp_path_factory):
    """The paper's served refiner and test writer: the tiny Qwen3 on a real vLLM server."""
    from selfplay.llm.tiny_random import ensure_tiny_model

    model = ensure_tiny_model("qwen3", TINY_CACHE / "qwen3")
    name = PAPER["evolve"]["generator_served"]["model"]
    with served(model, name, 8192, tmp_path_factory.mktemp("vllm_server") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory, generator_server):
    workdir = tmp_path_factory.mktemp("rehearsal_evolve")
    exp = workdir / EXP

    def step(targets):
        return rehearse(
            cluster,
            workdir,
            ["evolve.yaml"],
            ["evolve.yaml"],
            extra=EXTRA,
            targets=targets,
            replace={LOCAL_VLLM_SERVER: generator_server},
        )

    seeds = step([f"{EXP}/seeds/dedup.jsonl"])
    kept = read_jsonl(exp / "seeds/dedup.jsonl")
    names = {s["id"]: FUNCTIONS[i % len(FUNCTIONS)] for i, s in enumerate(kept)}
    plant(
        exp / "round0/refine.jsonl",
        [
            {
                "outputs": [_refinement(names[s["id"]])],
                "meta": {"step": "refine", "problem_id": s["id"], "source": s["source"]},
            }
            for s in kept
        ],
    )
    suites = step([f"{EXP}/round0/suite.jsonl"])
    usable = [p for p in read_jsonl(exp / "round0/suite.jsonl") if p["reason"] is None]
    for model_name, kinds in POOL.items():
        plant(
            exp / f"pool/{model_name}.jsonl",
            [
                {
                    "outputs": [_program(p["entry"], k) for k in kinds],
                    "meta": {"step": "pool", "problem_id": p["id"], "model": model_name},
                }
                for p in usable
            ],
        )
    final = step(None)
    final.steps = [seeds, suites, final]
    final.usable = usable
    return final


def jobs(run) -> dict[str, int]:
    """Jobs per rule over the run's Snakemake invocations (run.steps)."""
    total: dict[str, int] = {}
    for r in run.steps:
        for rule, n in r.jobs.items():
            total[rule] = total.get(rule, 0) + n
    return total


def test_the_overlay_keeps_the_papers_settings():
    from selfplay.config.rehearsal import check_overlay

    kinds = {c.key: c.kind for c in check_overlay(OVERLAY, EXTRA, name="config/rehearsals/evolve.yaml")}
    assert (
        kinds["model"] == "model"
        and kinds["backend.device"] == "device"
        and kinds["evolve.rounds"] == "count"
    )
    for key in (
        "evolve.grpo.finetune",
        "evolve.grpo.learning_rate",
        "evolve.filter",
        "evolve.matrix.time_limit",
        "backend.name",
        "backend.max_model_len",
        "evolve.pool.sampling.temperature",
    ):
        assert not any(k == key or k.startswith(key + ".") for k in kinds), key


def test_every_table_and_figure_of_the_paper_is_built(run, record_property):
    run.record(record_property)
    record_property("rehearsal_evolve_wall_all_steps_s", round(sum(r.wall for r in run.steps), 1))
    assert run.missing == []
    for name in ("table1", "table2", "table3", "yield"):
        assert f"results/tables/evolve/{name}.md" in run.targets
    for n in (1, 2, 4, 5, 6):
        assert f"results/figures/evolve/figure{n}.png" in run.targets
    counts = jobs(run)
    assert counts["evolve_seeds"] == counts["evolve_embed"] == counts["evolve_dedup"] == 1
    assert counts.get("evolve_refine", 0) == 0 and counts.get("evolve_pool_generate", 0) == 0  # planted
    assert counts["evolve_suites0"] == counts["evolve_pool"] == 1
    rounds = OVERLAY["evolve"]["rounds"] + 1
    assert counts["evolve_dataset"] == counts["evolve_grpo"] == counts["evolve_matrix_merge"] == rounds
    assert counts["evolve_suite"] == counts["evolve_generate_merge"] == rounds - 1
    # the paper's blocks (evolve.matrix.shards, evolve.test_shards): the rehearsal keeps them
    matrix_shards, test_shards = PAPER["evolve"]["matrix"]["shards"], PAPER["evolve"]["test_shards"]
    assert (matrix_shards, test_shards) == (4, 2)
    assert counts["evolve_matrix"] == rounds * matrix_shards
    assert counts["evolve_generate"] == (rounds - 1) * test_shards
    benches = len(PAPER["evolve"]["benchmarks"]["runs"])
    assert counts["evolve_eval_generate"] == benches * (1 + rounds)  # base and one policy per round


def test_every_job_but_the_local_ones_went_through_sbatch(run):
    local = {"all", "prepare_model", "evolve_generate"}  # the served generator's client jobs run here
    submitted = sum(len(r.slurm_jobs) for r in run.steps)
    assert submitted == sum(n for rule, n in jobs(run).items() if rule not in local)


def test_round_one_tests_came_from_the_served_generator_and_the_benchmarks_from_vllm(run):
    exp = run.workdir / EXP
    writer = read_jsonl(exp / "round1/evolve.jsonl")
    assert writer, "round 1 wrote no requests: the planted pool did not reach the test writer"
    served_as = PAPER["evolve"]["generator_served"]
    for rec in writer:
        assert rec["backend"]["name"] == "openai" and rec["backend"]["model"] == served_as["model"]
        assert rec["backend"]["base_url"].startswith("http://127.0.0.1:")
        want = PAPER["evolve"][rec["meta"]["step"]]["sampling"]
        assert (
            rec["sampling"]["temperature"] == want["temperature"]
            and rec["sampling"]["top_p"] == want["top_p"]
        )
        assert (
            rec["sampling"]["max_new_tokens"]
            == OVERLAY["evolve"][rec["meta"]["step"]]["sampling"]["max_new_tokens"]
        )
    mode = PAPER["evaluation"]["modes"]["qwen3"]["sampling"]
    for bench in PAPER["evolve"]["benchmarks"]["runs"]:
        for tag in ("base", "grpo_r0", "grpo_r1"):
            records = read_jsonl(exp / f"eval/{bench}/{tag}/qwen3.jsonl")
            assert records, (bench, tag)
            for rec in records:
                assert rec["backend"]["name"] == "vllm" and rec["backend"]["versions"]["vllm"] != "unknown"
                s = rec["sampling"]
                assert (s["temperature"], s["top_p"], s["top_k"]) == (
                    mode["temperature"],
                    mode["top_p"],
                    mode["top_k"],
                )


def test_grpo_fully_fine_tuned_each_rounds_policy_with_the_papers_settings(run):
    exp = run.workdir / EXP
    grpo = PAPER["evolve"]["grpo"]
    for r in range(OVERLAY["evolve"]["rounds"] + 1):
        folder = exp / f"grpo/r{r}/adapter"
        record = read_json(folder / "training_record.json")
        assert record["trained"], record.get("reason")
        assert record["finetune"] == "full" and record["steps"] == 1 and record["n_prompts"] > 0
        # a whole model with its tokenizer, not a LoRA adapter
        assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
        assert not (folder / "adapter_config.json").exists()
        assert record["device"] == "cpu" and record["dtype"] == "float32"
        settings = record["settings"]
        for key in (
            "learning_rate",
            "epsilon_low",
            "epsilon_high",
            "temperature",
            "top_p",
            "max_prompt_tokens",
            "steps_per_generation",
            "batch_size",
            "grad_accum",
        ):
            assert settings[key] == grpo[key], key
        rollouts = read_jsonl(exp / f"grpo/r{r}/rollouts.jsonl")
        assert rollouts and all(
            len(x["outputs"]) == OVERLAY["evolve"]["grpo"]["group_size"] for x in rollouts
        )
        assert all(x["backend"]["finetune"] == "full" for x in rollouts)


def test_table3_evaluated_each_fully_fine_tuned_policy_in_place_of_the_base_model(run):
    exp = run.workdir / EXP
    for r in range(OVERLAY["evolve"]["rounds"] + 1):
        policy = (exp / f"grpo/r{r}/adapter").resolve()
        for bench in PAPER["evolve"]["benchmarks"]["runs"]:
            for rec in read_jsonl(exp / f"eval/{bench}/grpo_r{r}/qwen3.jsonl"):
                assert (run.workdir / rec["backend"]["model"]).resolve() == policy, (
                    bench,
                    rec["backend"]["model"],
                )
                assert not rec["meta"]["adapter_dir"]  # no LoRA adapter over the base model
    rows = [
        line
        for line in (run.workdir / "results/tables/evolve/table3.md").read_text().splitlines()
        if line.startswith("| GRPO on r")
    ]
    assert len(rows) == OVERLAY["evolve"]["rounds"] + 1 and not any("not trained" in row for row in rows), (
        rows
    )


def test_the_planted_answers_are_marked_and_the_matrices_ran_them_in_the_sandbox(run):
    exp = run.workdir / EXP
    assert all(
        r["planted"] and r["backend"]["name"] == "planted" for r in read_jsonl(exp / "round0/refine.jsonl")
    )
    matrices = read_jsonl(exp / "round0/matrix.jsonl")
    assert len(matrices) == len(run.usable) > 0
    for m in matrices:
        assert len(m["passed"]) == sum(len(k) for k in POOL.values())
        assert any(all(row) for row in m["passed"]) and not all(all(row) for row in m["passed"])
    data = read_jsonl(exp / "round0/dataset.jsonl")
    assert any(d["kept"] for d in data)
