"""Dress rehearsal of paper 000 (config/papers/seq.yaml, regime E0; E1-E3 planned), issue 19.

The paper config as shipped, with config/rehearsals/seq.yaml on top (a tiny random
Qwen2-family model for the game, the tiny SmolLM2, a llama like the paper's 70B
translator, for the translation; counts, vLLM's CPU build, the test cluster's job sizes,
benchmark fixtures in the release formats: checked by selfplay.config.rehearsal), run
through the real local SLURM cluster with the test profile to rule `all` (Tables 2-6,
the data yield, Figures 3-7 and Alice's per-round figures) and to Tables 7-8 and Figure
19 over the rehearsed regimes. The paper's path from the start: OpenCodeInstruct rows
(tests/seq_fixtures/opinstruct.parquet, in the release's format, put where the download
rule writes) pre-filtered, translated by the model, filtered with GHC, split; then the
game at SEQ/SINQ 50/50 with proof retries, training, the benchmark layer. Liquid Haskell
is the haskell image's ($SELFPLAY_LIQUID): here its test double tests/fakes/liquid.
Regimes E1-E3 change only seq_probability and where P comes from: each is planned on
top of the rehearsed E0 (E2/E3 would read E0's regimes.json in their jobs; with a random
model E0 makes no SEQ attempt, and rule seq_regimes rightly refuses a yield from none).
A random translator writes no Haskell that the filter keeps, so, as the 002/003
rehearsals plant answers, this one runs the translation on vLLM first, then plants one
translation per Python row (a shipped reference program, reflectable ones first, marked
`planted` with the engine that ran beside it) and runs the rest: the filter compiles and
runs them with GHC, and the game, proofs and training have sources to work on.
Machinery: tests/rehearsal.py; run alone: `.venv/bin/python -m pytest -m rehearsal`.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml
from rehearsal import OVERLAYS, PAPERS, REPO, rehearse, snakemake_command
from test_rehearsal_evolve import jobs as jobs_over_steps
from workflow_helpers import jobs_run

from selfplay.data.haskell_sources import load_reference_programs
from selfplay.records import read_json, read_jsonl, write_jsonl

pytestmark = [
    pytest.mark.slow,
    pytest.mark.rehearsal,
    pytest.mark.skipif(
        shutil.which("ghc") is None,
        reason=("GHC is missing: apt-get install ghc (scripts/install_system_test.sh does it as root)"),
    ),
]

EXP = "results/seq/rehearsal_e0"
TRANSLATED = "results/seq/translate/generations.jsonl"
PAPER = yaml.safe_load((PAPERS / "seq.yaml").read_text())
# (not E0's regimes.json: rule seq_regimes rightly refuses a yield from zero SEQ attempts,
# which is what a random model's answers give)
REGIME_WIDE = [
    "results/tables/seq/table7.md",
    "results/tables/seq/table8.md",
    "results/figures/seq/figure19.png",
]


def plant_translations(path) -> list[dict]:
    """Each translation request answered with a shipped reference program (reflectable
    ones first, one per request) in a ```haskell block, as a capable translator would
    answer; every record marked planted, with the engine that really ran kept beside it.
    Returns the records as the engine wrote them."""
    ran = read_jsonl(path)
    programs = sorted(load_reference_programs(), key=lambda p: (not p["reflectable"], p["entry_point"]))
    assert len(programs) >= len(ran), "fewer shipped programs than translation requests"
    write_jsonl(
        path,
        [
            {
                **r,
                "outputs": [f"Here is the translation.\n```haskell\n{prog['code'].rstrip()}\n```\n"],
                "ran_backend": r["backend"],
                "backend": {"name": "planted"},
                "planted": True,
            }
            for r, prog in zip(ran, programs)
        ],
    )
    return ran


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("rehearsal_seq")

    def step(targets, also=()):
        return rehearse(
            cluster,
            workdir,
            ["seq.yaml"],
            ["seq.yaml"],
            fixtures={"resources/downloads/seq/opinstruct.parquet": "tests/seq_fixtures/opinstruct.parquet"},
            model_dir=tiny_model_dir,
            env={"SELFPLAY_LIQUID": str(REPO / "tests" / "fakes" / "liquid")},
            targets=targets,
            also=also,
        )

    first = step([TRANSLATED])
    ran = plant_translations(workdir / TRANSLATED)
    final = step(None, also=REGIME_WIDE)
    final.steps, final.translation_ran = [first, final], ran
    return final


def test_every_table_and_figure_of_the_paper_is_built(run, record_property):
    run.record(record_property)
    assert run.missing == []
    tables = {t.rsplit("/", 1)[1] for t in run.targets if t.startswith("results/tables/seq/")}
    assert {
        "table2.md",
        "table3.md",
        "table4.md",
        "table5.md",
        "table6.md",
        "data_yield.md",
        "table7.md",
        "table8.md",
    } <= tables
    figures = {t.rsplit("/", 1)[1] for t in run.targets if t.startswith("results/figures/seq/")}
    assert {
        "figure3.png",
        "figure4.png",
        "figure5.png",
        "figure6.png",
        "figure7.png",
        "figure19.png",
    } <= figures
    record_property("rehearsal_seq_wall_all_steps_s", round(sum(r.wall for r in run.steps), 1))
    jobs = jobs_over_steps(run)
    assert jobs["seq_translate_generate"] == 1 and jobs["seq_translate_filter"] == 1
    attempts, stages = run.overlay["seq"]["proof"]["attempts"], run.overlay["seq"]["rounds"] + 2
    assert jobs["seq_proof_generate"] == attempts * stages * run.overlay["seq"]["shards"]
    assert jobs["train_alice"] == 1 and jobs["train_bob"] == 1


def test_the_translation_and_the_game_ran_on_vllm_with_the_papers_sampling(run):
    exp = run.workdir / EXP
    assert run.translation_ran and all(r["backend"]["name"] == "vllm" for r in run.translation_ran)
    planted = read_jsonl(run.workdir / TRANSLATED)
    assert all(r["planted"] and r["ran_backend"]["name"] == "vllm" for r in planted)
    sources = read_jsonl(run.workdir / "results/seq/translate/translated.jsonl")
    assert len(sources) == len(planted), "a planted translation did not pass GHC's filter"
    want = PAPER["seq"]["alice"]["sampling"]
    records = [
        r
        for f in sorted(exp.glob("*/*/shard*.jsonl"))
        if f.parent.name.startswith(("alice", "proof_gen", "bob"))
        for r in read_jsonl(f)
    ]
    assert records
    for rec in records:
        assert rec["backend"]["name"] == "vllm" and rec["backend"]["device"] == "cpu"
        assert rec["backend"]["max_lora_rank"] == PAPER["backend"]["max_lora_rank"]
        for key in ("temperature", "top_p", "top_k", "presence_penalty"):
            assert rec["sampling"][key] == want[key], key
    assert read_json(exp / "bob/adapter/training_record.json").get("finetune") != "full"  # the paper's LoRA


def test_the_other_regimes_plan_on_the_rehearsed_e0(run, cluster):
    for regime in ("seq_e1.yaml", "seq_e2.yaml", "seq_e3.yaml"):
        files = [PAPERS / "seq.yaml", PAPERS / regime, run.workdir / "rehearsal_seq.yaml", OVERLAYS / regime]
        proc = subprocess.run(
            snakemake_command(run.workdir, files, "-n"),
            capture_output=True,
            text=True,
            timeout=600,
            env=cluster.client_env(),
        )
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
        jobs = jobs_run(proc)
        # the translation is E0's (shared); the game runs again under the regime's own name
        assert "seq_translate_generate" not in jobs and jobs["seq_alice_generate"] >= 1, (regime, jobs)
