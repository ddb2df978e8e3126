"""Dress rehearsal of paper 004 (config/papers/gasp.yaml, GASP), issue 21.

The paper config as shipped, with config/rehearsals/gasp.yaml on top (a tiny random
Qwen2 for the policy, counts, vLLM's CPU build, the test cluster's job sizes, the
experiment's folder; checked by selfplay.config.rehearsal with the allowances in EXTRA),
run to rule `all` (Tables 1-4, the yield table, Figures 3-5 and 7-14) through the real
local SLURM cluster with the test profile. Everything else is the paper's: the goalpost
filter on the training split (LiveCodeBench's smoke rows in their release format: two
of its five rows are training problems), vLLM with the paper's sampling and LoRA adapters
read from each policy state, the validity checks, the rewards, Task-Relative REINFORCE++
and GRPO updates on recorded rollouts, every checkpoint through the benchmark layer.

Three of the paper's eight methods run: gasp (the teacher phases, the solver), real_rl
(the real-data phase alone) and gasp_real_rl (both); the five others (the ablations and
our unguided stand-in for AZR) run the same rules and steps with other settings, and
the embedded default and tests/test_gasp_pipeline.py run them.

Machinery: tests/rehearsal.py; run alone: `.venv/bin/python -m pytest -m rehearsal`.
"""

from __future__ import annotations

import pytest
import yaml
from rehearsal import PAPERS, rehearse

from selfplay.records import read_json, read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal]

EXP = "results/gasp/rehearsal"
PAPER = yaml.safe_load((PAPERS / "gasp.yaml").read_text())
# Keys beyond the checker's kinds that this paper's overlay changes, and why.
EXTRA = {
    "gasp.azr_checkpoint": "model: the tiny Qwen2 in place of the released AZR-Coder-7B checkpoint",
    "gasp.methods": "count: three of the eight methods, one per code path (teacher phases, real-data phase, both)",
    "gasp.eval_every": "count: every checkpoint evaluated (one iteration)",
    "gasp.overrides.real_rl.eval_every": "count: every checkpoint evaluated (one iteration)",
    "gasp.overrides.gasp_real_rl": "count: two iterations of the joint variant, evaluated at the paper's interval",
    "gasp.goalposts.filter.final_rl.eval_every": "count: the final RL filter's one checkpoint scored",
    "gasp.teacher.candidates_per_attempt": "count: candidates per generation step",
    "gasp.teacher.target_accepted": "count: M",
    "gasp.teacher.max_attempts": "count: generation steps per phase",
    "gasp.real_data.problems_per_iteration": "count: training problems per real-data update",
    "evaluation.modes.gasp_sampled.pass_at_k": "count: k values the 2 samples allow",
}


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory):
    return rehearse(
        cluster, tmp_path_factory.mktemp("rehearsal_gasp"), ["gasp.yaml"], ["gasp.yaml"], extra=EXTRA
    )


def test_every_table_and_figure_of_the_paper_is_built(run, record_property):
    run.record(record_property)
    assert run.missing == []
    for t in ("table1", "table2", "table3", "table4", "yield"):
        assert f"results/tables/gasp/{t}.md" in run.targets
    for fig in (3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14):
        assert f"results/figures/gasp/figure{fig}.png" in run.targets
    jobs = run.jobs
    assert jobs["gasp_goalpost_prefilter"] == jobs["gasp_goalpost_filter"] == 1
    # real_rl and the final RL filter (filter_rl) one iteration each, gasp_real_rl two
    assert jobs["gasp_real_phase"] == 4
    assert jobs["gasp_solver_phase"] == 3  # gasp (one iteration) and gasp_real_rl (two)
    assert jobs["gasp_selection"] == 3  # Table 3's checkpoint of each run


def test_table3_evaluates_greedily_only_the_checkpoint_each_run_selects(run):
    """Table 3 is greedy pass@1 at each seed's checkpoint with the best sampled pass@20
    (here pass@2, of 2 samples): the greedy benchmarks score the base model, the AZR
    stand-in and the checkpoint each run's selection names, nothing else."""
    root = run.workdir / EXP
    selected = []
    for method_name in run.overlay["gasp"]["methods"]:
        chosen = read_json(root / f"{method_name}/s0/selection.json")
        assert chosen["rule"] == "pass@2" and chosen["tag"] in chosen["values"]
        selected.append(chosen["tag"])
    for bench in PAPER["gasp"]["evaluation"]["greedy"]["benchmarks"]:
        evaluated = {p.parent.name for p in (root / "eval" / bench).glob("*/greedy.scored.jsonl")}
        assert evaluated == {"base", "azr", *selected}, bench
    table3 = (run.workdir / "results/tables/gasp/table3.md").read_text()
    assert "not evaluated greedily" not in table3


def test_the_goalposts_are_the_training_problems_no_filter_solved(run):
    records = read_jsonl(run.workdir / EXP / "goalpost_filter.jsonl")
    assert len(records) == 2  # the smoke file's training problems
    # stages 1-2: the base model, the Real-data RL checkpoint, the released AZR checkpoint
    # (here a tiny stand-in); stage 3: the final RL run's checkpoint, trained on what they left
    stages = ["base", "ck_real_rl_s0_i1", "azr", "ck_filter_rl_s0_i1"]
    for r in records:
        names = [f["filter"] for f in r["filters"]]
        assert names == stages[: len(names)] and (r["stage"] is None) == r["kept"]
        assert r["kept"] == (names == stages)
    prefiltered = read_jsonl(run.workdir / EXP / "goalposts_prefiltered.jsonl")
    kept = read_jsonl(run.workdir / EXP / "goalposts_filtered.jsonl")
    assert [r["question_id"] for r in kept] == [r["id"] for r in records if r["kept"]]
    assert {r["question_id"] for r in kept} <= {r["question_id"] for r in prefiltered}
    # the final RL run drew its problems from the prefilter's rows only
    final_rl = read_jsonl(run.workdir / EXP / "filter_rl/s0/iter1/real/answers.jsonl")
    assert final_rl and {a["task_id"] for a in final_rl} <= {r["question_id"] for r in prefiltered}


def test_the_phases_ran_on_vllm_and_the_updates_chained_the_states(run):
    lemma = run.workdir / EXP / "gasp/s0/iter1/lemma"
    teacher = read_jsonl(lemma / "teacher.jsonl")
    assert {r["backend"]["name"] for r in teacher} == {"vllm"}
    assert len(teacher) == run.overlay["gasp"]["teacher"]["candidates_per_attempt"]
    rows = read_jsonl(lemma / "candidates.jsonl")
    assert all(r["reward"] == (-1.0 if r["outcome"] == "format_error" else r["reward"]) for r in rows)
    state = read_json(lemma / "state/policy_state.json")
    assert state["finetune"] == PAPER["gasp"]["update"]["finetune"]
    # the joint variant's real-data phase generated with the policy of the state before it:
    # the fully fine-tuned model in place of the base (the paper's way), or a LoRA adapter
    real = read_jsonl(run.workdir / EXP / "gasp_real_rl/s0/iter1/real/student.jsonl")
    assert real
    for r in real:
        loaded = r["backend"]["model"] if state["finetune"] == "full" else r["adapter"]
        assert loaded and "/gasp_real_rl/s0/iter1/" in loaded and loaded.endswith("/state/policy"), r[
            "backend"
        ]
        assert (r["adapter"] is None) == (state["finetune"] == "full")
    record = read_json(run.workdir / EXP / "real_rl/s0/iter1/real/state/training_record.json")
    assert record.get("skipped") or record["estimator"] == PAPER["gasp"]["real_data"]["estimator"]


def test_states_behind_the_chain_are_pruned_as_the_paper_config_asks(run):
    """keep_states: checkpoints: each update, before it trains, prunes the state one step
    behind the one it starts from. In the joint variant's two iterations (evaluated at
    iteration 2 only) the lift and solver updates are skipped (nothing accepted), so the
    trained states are lemma1, real1, lemma2, real2: iteration 2's lemma update prunes
    lemma1, its lift update real1 (an unevaluated checkpoint); the last two stay whole."""
    assert PAPER["gasp"]["update"]["keep_states"] == "checkpoints"
    joint = run.workdir / EXP / "gasp_real_rl/s0"
    trained = [joint / f"iter{i}/{p}/state" for i in (1, 2) for p in ("lemma", "real")]
    assert all((s / "policy_state.json").is_file() for s in trained), "an update had nothing to train on"
    lemma1, real1, lemma2, real2 = trained

    def weights(state):
        return [p for p in (state / "policy").iterdir() if p.name.endswith(".safetensors")]

    for state, replaced_by in ((lemma1, real1), (real1, lemma2)):
        pruned = read_json(state / "pruned.json")
        assert pruned["policy_kept"] is False and "sharded" in pruned["removed"], pruned
        assert pruned["replaced_by"] == str(replaced_by.relative_to(run.workdir))
        assert not (state / "sharded").exists() and not weights(state)
    for state in (lemma2, real2):  # real2: iteration 2's (evaluated) checkpoint
        assert (state / "sharded").is_dir() and weights(state) and not (state / "pruned.json").exists()
    # only iteration 2's checkpoint went through the benchmark layer (eval_every 2)
    evals = run.workdir / EXP / "eval"
    assert list(evals.glob("*/ck_gasp_real_rl_s0_i2")) and not list(evals.glob("*/ck_gasp_real_rl_s0_i1"))
