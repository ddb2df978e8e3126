"""Dress rehearsal of paper 003 (config/papers/psv.yaml, PSV), issue 19.

The paper config as shipped, with config/rehearsals/psv.yaml on top (a tiny random Qwen2
for the solver and Table 6's model, counts, vLLM's CPU build, the test cluster's job sizes;
checked by selfplay.config.rehearsal with the allowances in EXTRA), run to every table and
figure (`psv_all`: Tables 1, 2, 3, 6, the yield table, Figures 1, 4, 5, 6) through the real
local SLURM cluster with the test profile. Everything else is the paper's: Verus as the
language, vLLM with the paper's sampling, every setting and method, the difficulty
thresholds, RFT's training sets, the solver's LoRA settings, Table 6's conditions.

Two things this machine lacks are stood in for, as the overlay says: Verus by its TEST
DOUBLE tests/fakes/fake_verus.py (run through the real Verus runner and sandbox; it
replays recorded Verus output and verifies nothing), laid out by this test beside its
recordings; the three Verus sets by the shipped files in their release formats
(tests/verus_sets_fixtures), put where rule psv_download_set puts a download.

A randomly initialised solver writes nothing that parses, so nothing would be verified,
trained on or shown as a worked example. The run therefore goes in two steps through the
same workflow and cluster: (1) the three problem sets; (2) iteration 0's answers (the base
model solving each setting's seed set, rule psv_solve's file) are PLANTED, marked
`planted` in each record: per problem one answer with the release's reference body and
one without code; then every table and figure. Everything after them is the workflow's
own: the screen and the Verus double's verdicts, RFT's training sets (verified again),
LoRA training, vLLM with the trained adapters, the proposer (vLLM), the spec checks, the
prompting baseline's worked examples.

Machinery: tests/rehearsal.py; run alone: `.venv/bin/python -m pytest -m rehearsal`.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
import yaml
from rehearsal import OVERLAYS, PAPERS, rehearse
from test_rehearsal_evolve import jobs
from workflow_helpers import REPO

from selfplay.records import read_json, read_jsonl, write_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal]

EXP = "results/psv/rehearsal"
PAPER = yaml.safe_load((PAPERS / "psv.yaml").read_text())
OVERLAY = yaml.safe_load((OVERLAYS / "psv.yaml").read_text())
DOUBLE = "verus/verus_recorded/fake_verus.py"
# Keys beyond the checker's kinds that this paper's overlay changes, and why.
EXTRA = {
    "psv.propose.budget": "count: proposals per iteration (B)",
    "psv.methods": "count: each method's budget B and its iterations (Figures 5 and 6 scaled down)",
    "psv.evaluation.ks": "count: pass@k up to the n samples",
    "psv.table6.ks": "count: pass@k up to the n samples",
    "psv.fewshot.exemplars": "count: worked examples in the prompting baseline's prompt",
    "psv.verify.verus.command": "Verus cannot be installed here: its test double tests/fakes/fake_verus.py",
}
SETS = {"dafny2verus": "dafny2verus", "mbpp": "mbpp", "humaneval": "humaneval"}
TARGETS = (
    [f"results/tables/psv/table{i}.{e}" for i in (1, 2, 3, 6) for e in ("csv", "md")]
    + [f"results/figures/psv/figure{i}.{e}" for i in (1, 4, 5, 6) for e in ("png", "pdf")]
    + ["results/tables/psv/yield.md", "results/tables/psv/yield.csv"]
)


def lay_out(workdir) -> None:
    """The Verus sets where their download rule puts them, and the Verus double inside a
    copy of its recordings (the sandbox shows a command's own folder and nothing else)."""
    for pset, dataset in SETS.items():
        src, dest = (
            REPO / "tests" / "verus_sets_fixtures" / dataset,
            workdir / "resources" / "downloads" / "psv" / pset,
        )
        shutil.copytree(src, dest, dirs_exist_ok=True)
        # dated now, as a download would be: older than its rule's script, Snakemake would fetch it again
        for path in [*sorted(dest.rglob("*"), reverse=True), dest]:
            os.utime(path)
    recorded = workdir / "verus" / "verus_recorded"
    shutil.copytree(REPO / "tests" / "verus_recorded", recorded, dirs_exist_ok=True)
    shutil.copy(REPO / "tests" / "fakes" / "fake_verus.py", recorded / "fake_verus.py")


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("rehearsal_psv")
    lay_out(workdir)

    def step(targets):
        # the double by its absolute path: the sandbox runs Verus in a folder of its own
        return rehearse(
            cluster,
            workdir,
            ["psv.yaml"],
            ["psv.yaml"],
            extra=EXTRA,
            targets=targets,
            replace={DOUBLE: str(workdir / DOUBLE)},
        )

    sets = step([f"{EXP}/problems/{s}.jsonl" for s in SETS])
    planted = plant_iteration0(workdir, filled_config())
    final = step(TARGETS)
    final.steps, final.planted = [sets, final], planted
    return final


def reference_bodies() -> dict[str, str]:
    """(set, function) -> the braced body of its reference solution in the shipped Verus sets
    (each gold program is its spec, which ends with the body's opening brace, then the body)."""
    bodies = {}
    for dataset in SETS.values():
        for line in (REPO / "tests" / "verus_sets_fixtures" / dataset / "data" / f"{dataset}.jsonl").open():
            try:  # the fixtures hold some malformed rows on purpose (the loader's tests)
                row = json.loads(line)
                gold, spec = row.get("gold_code") or "", row["spec"]
            except (ValueError, KeyError, AttributeError, TypeError):
                continue
            if not gold.startswith(spec) or not spec.rstrip().endswith("{"):
                continue
            depth, rest = 1, gold[len(spec) :]
            for i, ch in enumerate(rest):
                depth += {"{": 1, "}": -1}.get(ch, 0)
                if depth == 0:
                    names = re.findall(r"\bfn\s+(\w+)", spec)  # the function the spec ends with
                    if names:
                        bodies[(dataset, names[-1])] = "{" + rest[: i + 1]
                    break
    return bodies


def plant_iteration0(workdir, cfg) -> dict[str, int]:
    """Iteration 0's answers of every setting: a reference body and an answer without code
    per seed problem, in the solver's answer format; returns the problems planted per setting."""
    from selfplay.tracks.psv import layout
    from selfplay.tracks.psv.game import solver_completion

    bodies, planted = reference_bodies(), {}
    assert solver_completion(cfg) == "body"  # the paper's answer format: the body, after the given spec
    for setting, s in cfg["psv"]["settings"].items():
        problems = read_jsonl(workdir / layout.problem_set(cfg, s["seed_set"]))
        records = []
        for p in problems:
            body = bodies.get((SETS[s["seed_set"]], p["target"]))
            if body is None:
                continue
            records.append(
                {
                    "messages": [{"role": "user", "content": "(planted)"}],
                    "planted": True,
                    "backend": {"name": "planted"},
                    "outputs": [f"```rust\n{body}\n```", "I cannot write this one."],
                    "meta": {"role": "solver", "model": "base", "problem_id": p["id"], "adapter_dir": None},
                }
            )
        assert records, f"no reference body for any seed problem of {setting}"
        for seed in cfg["psv"]["seeds"]:
            path = workdir / layout.solutions(cfg, setting, "base", seed, 0)
            path = path.with_name("solve.jsonl")
            path.parent.mkdir(parents=True, exist_ok=True)
            write_jsonl(path, records)
        planted[setting] = len(records)
    return planted


def filled_config():
    from test_config_loading import load_as_snakemake

    from selfplay.config import prepare_config

    return prepare_config(
        load_as_snakemake(("config/papers/psv.yaml", "config/rehearsals/psv.yaml")),
        "resources/tiny-models/qwen2",
    )


def test_the_overlay_keeps_the_papers_settings():
    from selfplay.config.rehearsal import check_overlay

    kinds = {c.key: c.kind for c in check_overlay(OVERLAY, EXTRA, name="config/rehearsals/psv.yaml")}
    assert kinds["model"] == "model" and kinds["psv.iterations"] == "count"
    for key in (
        "psv.language",
        "psv.difficulty",
        "psv.rft",
        "psv.solve.sampling.temperature",
        "backend.name",
        "psv.training.solver.lora_r",
        "psv.settings",
        "psv.tables",
        "psv.figures",
    ):
        assert not any(k == key or k.startswith(key + ".") for k in kinds), key
    assert OVERLAY["psv"]["verify"]["verus"]["command"][-1] == DOUBLE


def test_every_table_and_figure_of_the_paper_is_built(run, record_property):
    from selfplay.tracks.psv import layout
    from selfplay.tracks.psv.methods import BUILT_IN

    run.record(record_property)
    assert run.missing == []
    cfg = filled_config()
    psv = cfg["psv"]
    loops = {m for names in [*psv["tables"].values(), *psv["figures"].values()] for m in names} - set(
        BUILT_IN
    )
    solves = (
        len(psv["settings"]) * len(psv["seeds"]) * (1 + sum(layout.iterations(cfg, m) - 1 for m in loops))
    )
    counts = jobs(run)
    # iteration 0 of each setting was planted: its solve job did not run, its scoring did
    assert counts["psv_solve"] == solves - len(psv["settings"]) * len(psv["seeds"])
    assert counts["psv_score_solutions"] == solves
    assert (
        counts["psv_problem_set"] == len(SETS) and "psv_download_set" not in counts
    )  # the fixtures stood in
    assert counts["psv_propose"] == counts["psv_check_proposals"] == counts["psv_grow_pool"] > 0
    assert counts["psv_train_solver"] == counts["psv_trainset"] > 0
    assert counts["psv_t6_train"] == len(psv["table6"]["models"]) * len(psv["table6"]["conditions"])
    assert counts["psv_method_table"] == 3 and counts["psv_table6"] == 1


def test_every_job_but_the_local_ones_went_through_sbatch(run):
    local = {"prepare_model", "psv_all"}
    assert sum(len(r.slurm_jobs) for r in run.steps) == sum(
        n for rule, n in jobs(run).items() if rule not in local
    )


def test_rft_trained_lora_adapters_on_verified_solutions_and_vllm_evaluated_them(run):
    exp = run.workdir / EXP
    records = [read_json(p) for p in sorted(exp.glob("*/*/seed*/model*/adapter/training_record.json"))]
    trained = [r for r in records if r.get("trained")]
    assert trained, [r.get("reason") for r in records]
    lora = PAPER["psv"]["training"]["solver"]
    for folder in sorted(exp.glob("*/*/seed*/model*/adapter")):
        if read_json(folder / "training_record.json").get("trained"):
            assert read_json(folder / "adapter_config.json")["r"] == lora["lora_r"]
    # the evaluation of a trained theta_t went through vLLM with its adapter
    used = [
        rec
        for p in sorted(exp.glob("*/*/seed*/model[1-9]*/eval_*/generations.jsonl"))
        for rec in read_jsonl(p)
    ]
    assert used and all(rec["backend"]["name"] == "vllm" for rec in used)
    assert any(rec["meta"].get("adapter_dir") for rec in used)


def test_solving_and_proposing_came_from_vllm_with_the_papers_sampling(run):
    exp = run.workdir / EXP
    solves = [p for p in sorted(exp.glob("*/*/seed*/iter*/solve.jsonl")) if p.parent.name != "iter0"]
    proposals = sorted(exp.glob("*/*/seed*/iter*/propose.jsonl"))
    assert solves and proposals
    for path, step in [(p, "solve") for p in solves] + [(p, "propose") for p in proposals]:
        want = PAPER["psv"][step]["sampling"]
        for rec in read_jsonl(path):
            assert rec["backend"]["name"] == "vllm" and rec["backend"]["device"] == "cpu", path
            assert (
                rec["sampling"]["temperature"] == want["temperature"]
                and rec["sampling"]["top_p"] == want["top_p"]
            )
            assert rec["sampling"]["max_new_tokens"] == OVERLAY["psv"][step]["sampling"]["max_new_tokens"]
            if step == "solve":
                assert rec["sampling"]["n"] == OVERLAY["psv"]["solve"]["samples"]


def test_verdicts_came_from_the_verus_double_through_the_runner(run):
    exp = run.workdir / EXP
    rows = [r for p in sorted(exp.glob("*/*/seed*/iter*/solutions.jsonl")) for r in read_jsonl(p)]
    assert rows
    for row in rows:
        assert row["verifier"]["verifier"] == "verus", row["verifier"]
        assert row["verifier"]["settings"]["command"][-1] == str(run.workdir / DOUBLE), row["verifier"]
        for sample in row["samples"]:
            # a sample is verified only by the verifier, after the screen let its program through
            assert not sample["verified"] or (sample["parsed"] and sample["reason"] is None)
    # the planted reference bodies were screened and verified (by the double), the answers
    # without code were refused as unparsed
    base = [r for p in sorted(exp.glob("*/base/seed*/iter0/solutions.jsonl")) for r in read_jsonl(p)]
    assert len(base) == sum(run.planted.values())
    assert any(r["samples"][0]["verified"] for r in base)
    assert all(
        r["verifier"]["canary"] is not None for r in base
    )  # the job checked the double before believing it
    assert all(r["samples"][1]["reason"] == "parse:no_code_block" for r in base)
