"""Dress rehearsal of paper 001 (config/papers/sinq.yaml), issue 19.

The paper config as shipped, with config/rehearsals/sinq.yaml on top (the tiny model,
counts, vLLM's CPU build, the test cluster's job sizes, benchmark fixtures in the release
formats: checked by selfplay.config.rehearsal), run to rule `all` (Tables 1-4, the yield
table, Figures 2-4) through the real local SLURM cluster with the test profile. Figure
4's served models go through the local client rule to OpenAI-compatible servers on this
machine: the three public APIs to a test double (tests/test_llm_backends.py's), the
self-served R1 distillation to a real vLLM server (CPU build, the tiny model under its
name; tests/vllm_server.py). Everything else is the paper's: vLLM, its LoRA settings,
sampling, curriculum, verification, shards, modes.
Machinery: tests/rehearsal.py; run alone: `.venv/bin/python -m pytest -m rehearsal`.
"""

from __future__ import annotations

import re

import pytest
import yaml
from rehearsal import LOCAL_SERVER, LOCAL_VLLM_SERVER, PAPERS, rehearse
from test_llm_backends import FakeChatServer
from test_slurm import scontrol_job
from vllm_server import served

from selfplay.records import read_json, read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal]

EXP = "results/sinq/rehearsal"
SELF_SERVED = "deepseek-ai/DeepSeek-R1-Distill-Llama-70B"  # Figure 4's model on a server of its own
PAPER = yaml.safe_load((PAPERS / "sinq.yaml").read_text())


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory, tiny_model_dir):
    server = FakeChatServer()
    workdir = tmp_path_factory.mktemp("rehearsal_sinq")
    try:
        with served(
            tiny_model_dir, SELF_SERVED, 4096, tmp_path_factory.mktemp("vllm_server") / "server.log"
        ) as vllm_url:
            result = rehearse(
                cluster,
                workdir,
                ["sinq.yaml"],
                ["sinq.yaml"],
                replace={LOCAL_SERVER: server.url, LOCAL_VLLM_SERVER: vllm_url},
                model_dir=tiny_model_dir,
                env={"OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "k", "VLLM_API_KEY": "k"},
            )
    finally:
        server.close()
    result.server_bodies = server.bodies
    return result


def test_every_table_and_figure_of_the_paper_is_built(run, record_property):
    run.record(record_property)
    assert run.missing == []
    for name in ("table1.md", "yield.md"):
        assert f"results/tables/sinq/{name}" in run.targets
    for n in (2, 3, 4):
        assert f"results/figures/sinq/figure{n}.png" in run.targets
    # the benchmark tables: identifier swap (Table 2), PySecDB / CodeXGLUE (Table 3), EvalPlus (Table 4)
    assert len([t for t in run.targets if t.startswith("results/tables/sinq/") and t.endswith(".md")]) >= 5
    jobs = run.jobs
    rounds, shards = run.overlay["sinq"]["rounds"], run.overlay["sinq"]["shards"]
    assert jobs["sinq_alice_generate"] == shards * (rounds + 2)  # rounds, eval_train, eval_test
    assert jobs["train_alice"] == rounds and jobs["train_bob"] == 1


def test_gpu_jobs_got_a_gpu_through_sbatch_and_the_served_models_ran_locally(run, cluster):
    gpu_rules = {
        "sinq_alice_generate",
        "sinq_bob_generate",
        "sinq_eval_generate",
        "sinq_eval_generate_shard",
        "train_alice",
        "train_bob",
    }
    by_rule: dict[str, int] = {}
    for slurm_id in run.slurm_jobs.values():
        info = scontrol_job(cluster, slurm_id)
        assert info["JobState"] == "COMPLETED", info
        rule = re.match(r"rule_(\w+?)(_wildcards_|$)", info["Comment"]).group(1)
        by_rule[rule] = by_rule.get(rule, 0) + 1
        holds_gpu = info.get("JOB_GRES", "(null)") not in ("(null)", "")
        assert holds_gpu == (rule in gpu_rules), (rule, info)
    # every GPU job went through sbatch; Figure 4's HTTP clients never did (issue 19)
    assert {r: n for r, n in by_rule.items() if r in gpu_rules} == {
        r: n for r, n in run.jobs.items() if r in gpu_rules
    }
    assert "sinq_eval_generate_client" not in by_rule and run.jobs["sinq_eval_generate_client"] >= 1
    assert (
        run.jobs.get("sinq_eval_generate_shard", 0) >= 2
    )  # the paper's sharded evaluation cells ran sharded


def test_every_generation_came_from_vllm_with_the_papers_sampling(run):
    over = run.overlay
    records = [
        r
        for f in sorted((run.workdir / EXP).glob("*/*/shard*.jsonl"))
        if f.parent.name.startswith(("alice", "bob"))
        for r in read_jsonl(f)
    ]
    assert records
    for rec in records:
        backend = rec["backend"]
        assert (
            backend["name"] == "vllm"
            and backend["device"] == "cpu"
            and backend["versions"]["vllm"] != "unknown"
        )
        assert (
            backend["max_lora_rank"] == PAPER["backend"]["max_lora_rank"]
        )  # vLLM's own settings: the paper's
        role = rec["meta"]["role"]
        want = PAPER["sinq"][role]["sampling"]
        assert (
            rec["sampling"]["temperature"] == want["temperature"]
            and rec["sampling"]["top_p"] == want["top_p"]
        )
        assert rec["sampling"]["max_new_tokens"] == over["sinq"][role]["sampling"]["max_new_tokens"]
        assert rec["sampling"]["n"] == (over["sinq"]["bob"]["samples"] if role == "bob" else 1)
    assert any(text.strip() for rec in records for text in rec["outputs"])  # the model really wrote something


def test_the_benchmarks_ran_on_vllm_with_the_trained_bob_and_the_served_models_on_the_server(run):
    exp = run.workdir / EXP
    bob = read_jsonl(exp / "eval/humaneval/bob/greedy.jsonl")
    trained = read_json(exp / "bob/adapter/training_record.json")["trained"]
    assert len(bob) == 2 and all(r["backend"]["name"] == "vllm" for r in bob)
    assert all(bool(r["meta"]["adapter_dir"]) == trained for r in bob)
    # Figure 4: each served model answered through the openai backend, on the local client rule
    models = {m["tag"]: m["model"] for m in PAPER["sinq"]["benchmarks"]["other_models"]}
    assert run.jobs["sinq_eval_generate_client"] == len(models) * 2  # identifier swap: greedy and cot
    assert all(body["messages"] for body in run.server_bodies)
    # the public APIs' models reached the test double; the self-served one the real vLLM server
    assert {b["model"] for b in run.server_bodies} == set(models.values()) - {SELF_SERVED}
    assert models["r1_distill_llama70b"] == SELF_SERVED
    for mode in ("greedy", "cot"):
        records = read_jsonl(exp / f"eval/identifier_swap/r1_distill_llama70b/{mode}.jsonl")
        assert records and all(r["backend"]["name"] == "openai" for r in records)
        texts = [t for r in records for t in r["outputs"]]
        assert any(t.strip() for t in texts) and not any(t.startswith(f"{SELF_SERVED}|") for t in texts)
