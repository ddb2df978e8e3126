"""How the workflow gets its config, and that every shipped config means what it says.

- Every shipped config and every documented combination, loaded exactly as Snakemake
  loads it, builds every component's settings (backend, trainer, sandbox, verifiers).
- The old recursive merge of a paper config onto config.yaml is refused at the start
  (the vLLM backend inherited the default's transformers settings and crashed in its
  first generation job).
- Each of them plans (`snakemake -n`) in an empty working directory, as on a fresh clone.
- Nested numbers given with --config arrive typed; real mistakes still get one line.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from snakemake.cli import parse_config
from snakemake.common.configfile import load_configfile
from snakemake.utils import update_config
from workflow_helpers import plan_workflow

from selfplay.config import prepare_config, validate_config
from selfplay.errors import UserError

REPO = Path(__file__).resolve().parents[1]

# What the README and the config comments tell users to run.
SHIPPED = [
    (),  # no --configfile: config.yaml
    ("config/papers/sinq.yaml",),
    ("config/papers/seq.yaml",),
    ("config/papers/seq.yaml", "config/papers/seq_e1.yaml"),
    ("config/papers/seq.yaml", "config/papers/seq_e2.yaml"),
    ("config/papers/seq.yaml", "config/papers/seq_e3.yaml"),
    ("config/papers/psv.yaml",),
    ("config/papers/evolve.yaml",),
    ("config/papers/gasp.yaml",),
]


def load_as_snakemake(configfiles: tuple[str, ...], overrides: list[str] = ()) -> dict:
    """The config the Snakefile sees: config.yaml only without --configfile, else the named
    files merged left to right; --config entries on top (Snakemake's own parser)."""
    cfg: dict = {}
    for path in configfiles or ("config.yaml",):
        update_config(cfg, load_configfile(str(REPO / path)))
    update_config(cfg, parse_config(list(overrides)))
    return cfg


def model_dir_of(cfg: dict) -> str:
    return (
        cfg["model"].get("path")
        if cfg["model"]["source"] == "local"
        else f"resources/models/{cfg['model']['name']}"
    )


@pytest.mark.parametrize("files", SHIPPED, ids=lambda f: "+".join(Path(p).stem for p in f) or "default")
def test_each_shipped_config_builds_every_component(files):
    cfg = prepare_config(load_as_snakemake(files), model_dir_of(load_as_snakemake(files)))
    if files:  # a paper config: its backend is its own, nothing inherited from the tiny default
        paper = yaml.safe_load((REPO / files[0]).read_text())
        assert set(cfg["backend"]) == set(paper["backend"])
        assert {k: cfg["model"][k] for k in paper["model"]} == paper["model"]  # the rest: schema defaults
        assert cfg["tracks"] and all(t in cfg for t in cfg["tracks"])


def test_the_old_merge_onto_the_default_is_refused_at_the_start():
    """config.yaml + sinq.yaml merged recursively gave the vLLM backend batch_size/threads."""
    cfg = {}
    for path in ("config.yaml", "config/papers/sinq.yaml"):
        update_config(cfg, load_configfile(str(REPO / path)))
    with pytest.raises(UserError) as err:
        prepare_config(cfg, "resources/models/x")
    assert "config key backend" in str(err.value)
    assert "batch_size" in str(err.value) and "threads" in str(err.value)


@pytest.mark.parametrize(
    "section, value, key",
    [
        ("backend", {"name": "transformers", "max_lora_rank": 8}, "backend"),
        ("training", {"lora_r": 8, "warmup_ratio": 1.0}, "sinq.training.alice"),
        ("training", {"lora_r": 8, "target_modules": []}, "sinq.training.alice"),
    ],
)
def test_a_combination_a_job_would_refuse_is_refused_at_the_start(section, value, key):
    cfg = load_as_snakemake(())
    if section == "backend":
        cfg["backend"] = value
    else:
        cfg["sinq"]["training"]["alice"] = value
    with pytest.raises(UserError) as err:
        prepare_config(cfg, "resources/models/x")
    assert f"config key {key}" in str(err.value)


def test_nested_numbers_from_the_command_line_arrive_typed():
    cfg = load_as_snakemake(
        (), ["sinq={'bob': {'samples': 5}, 'verify': {'check_determinism': 'false'}}", "seed=7"]
    )
    assert cfg["sinq"]["bob"]["samples"] == "5"  # what Snakemake hands over: text
    validate_config(cfg)
    assert cfg["sinq"]["bob"]["samples"] == 5 and cfg["sinq"]["verify"]["check_determinism"] is False
    assert cfg["seed"] == 7
    assert cfg["sinq"]["bob"]["sampling"]["temperature"] == 1.0  # the rest of the section is kept


@pytest.mark.parametrize(
    "override, message",
    [
        ("sinq={'bob': {'samples': 'many'}}", "config key sinq.bob.samples: 'many' is not of type 'integer'"),
        ("sinq={'bob': {'samples': 0}}", "config key sinq.bob.samples: 0 is less than the minimum of 1"),
        ("sinq={'bob': {'sampels': 5}}", "config key sinq.bob"),
    ],
)
def test_real_mistakes_on_the_command_line_still_fail_naming_the_key(override, message):
    with pytest.raises(UserError) as err:
        validate_config(load_as_snakemake((), [override]))
    assert message in str(err.value)


def dry_run(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return plan_workflow(workdir, *args)


def _planned(files: tuple) -> object:
    """GASP's paper plan (17,369 jobs) takes about a minute: left out of `make test-fast`."""
    return pytest.param(files, marks=pytest.mark.slow) if "config/papers/gasp.yaml" in files else files


@pytest.mark.parametrize(
    "files", [_planned(f) for f in SHIPPED], ids=lambda f: "+".join(Path(p).stem for p in f) or "default"
)
def test_each_shipped_config_plans_on_a_fresh_clone(files, tmp_path):
    args = (
        ["--configfile", *[str(REPO / f) for f in files]]
        if files
        else ["--configfile", str(REPO / "config.yaml")]
    )
    proc = dry_run(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert "This was a dry-run" in proc.stdout
    assert not (tmp_path / "results").exists()


def test_a_nested_override_plans_and_a_bad_one_fails_with_one_line(tmp_path):
    ok = dry_run(tmp_path, "--config", "sinq={'bob': {'samples': 5}}")
    assert ok.returncode == 0, ok.stderr[-3000:]
    bad = dry_run(tmp_path, "--config", "sinq={'bob': {'samples': 'x'}}")
    assert bad.returncode != 0
    assert (
        "Configuration error: config key sinq.bob.samples: 'x' is not of type 'integer'"
        in bad.stderr + bad.stdout
    )
    assert "Traceback" not in bad.stderr


def test_the_regime_configs_read_e0s_yields_in_the_job_not_while_planning(tmp_path):
    """E2 plans without E0's results: the plan shows the job that needs them."""
    proc = dry_run(
        tmp_path,
        "--configfile",
        str(REPO / "config/papers/seq.yaml"),
        str(REPO / "config/papers/seq_e2.yaml"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "seq_regimes_of_other_run" in proc.stdout


def test_the_psv_paper_config_plans_every_table_and_figure(tmp_path):
    """`psv_all` at paper scale: one solve per iteration of every method the tables and
    figures name, per setting and seed (iteration 0 shared by the methods of a setting)."""
    from selfplay.tracks.psv import layout
    from selfplay.tracks.psv.methods import BUILT_IN

    proc = dry_run(tmp_path, "psv_all", "--configfile", str(REPO / "config/papers/psv.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    psv = yaml.safe_load((REPO / "config/papers/psv.yaml").read_text())["psv"]
    cfg = prepare_config(load_as_snakemake(("config/papers/psv.yaml",)), "unused")
    loops = {m for names in [*psv["tables"].values(), *psv["figures"].values()] for m in names} - set(
        BUILT_IN
    )
    solves = (
        len(psv["settings"]) * len(psv["seeds"]) * (1 + sum(layout.iterations(cfg, m) - 1 for m in loops))
    )
    jobs = {
        line.split()[0]: int(line.split()[1])
        for line in proc.stdout.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    assert jobs["psv_solve"] == solves
    assert jobs["psv_download_set"] == 3 and jobs["psv_t6_train"] == 3 * 2 and jobs["psv_table6"] == 1


def jobs_of(proc) -> dict[str, int]:
    return {
        line.split()[0]: int(line.split()[1])
        for line in proc.stdout.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }


def test_the_paper_benchmark_tables_and_figures_plan_at_paper_scale(tmp_path):
    """Paper 001's Tables 2-4 and Figures 3-4, paper 000's Tables 3-5 and 7, Figures 4-5,
    8-9 (E0's per-round figures) and 19 are targets of the paper configs; the other
    regimes' files (Table 7, Figure 19) are planned as jobs that say which run makes them."""
    sinq = dry_run(
        tmp_path,
        *[f"results/tables/sinq/table{n}.md" for n in (2, 3, 4)],
        *[f"results/figures/sinq/figure{n}.png" for n in (3, 4)],
        "--configfile",
        str(REPO / "config/papers/sinq.yaml"),
    )
    assert sinq.returncode == 0, sinq.stderr[-3000:] + sinq.stdout[-3000:]
    jobs = jobs_of(sinq)
    # 7 benchmarks: 12 (benchmark, mode) runs of base and Bob on GPUs, and Figure 4's four served
    # models x 2 modes as local HTTP clients; PySecDB's and CodeXGLUE's 3 modes each in 4 and 3
    # shards (evaluation.benchmarks.<b>.shards), merged by a local job per cell
    assert jobs["sinq_eval_generate"] == (12 - 6) * 2 and jobs["eval_download"] >= 6
    assert jobs["sinq_eval_generate_shard"] == 3 * (4 + 3) * 2 and jobs["sinq_eval_merge"] == 6 * 2
    assert jobs["sinq_eval_generate_client"] == 4 * 2
    assert jobs["eval_supplied"] == 1  # PySecDB: gated, a file the user supplies
    seq = dry_run(
        tmp_path,
        *[f"results/tables/seq/e0/table{n}.md" for n in (3, 4, 5)],
        *[f"results/figures/seq/e0/figure{n}.png" for n in (4, 5, 8, 9)],
        "results/tables/seq/table7.md",
        "results/figures/seq/figure19.png",
        "--configfile",
        str(REPO / "config/papers/seq.yaml"),
    )
    assert seq.returncode == 0, seq.stderr[-3000:] + seq.stdout[-3000:]
    jobs = jobs_of(seq)
    # Table 3 / Figures 8-9: base, Bob and 7 rounds of Alice on two Haskell benchmarks, then
    # base and Bob on three; every cell but HumanEval's in shards (MBPP 3, EquiBench 16,
    # CodeXGLUE 16, PySecDB 24), merged by a local job per cell
    assert jobs["seq_eval_generate"] == 2 + 7
    assert jobs["seq_eval_generate_shard"] == (2 + 7) * 3 + 2 * (16 + 16 + 24)
    assert jobs["seq_eval_merge"] == (2 + 7) + 3 * 2
    assert jobs["seq_file_of_other_regime"] > 0 and "seq_table7" in jobs and "seq_figure19" in jobs


def test_the_evolve_paper_config_plans_every_round_and_table(tmp_path):
    """Paper 002 at paper scale: 8 pool models, rounds 0-3 with a matrix and a dataset
    each, one GRPO policy per round, and every Table 3 cell (5 models x 7 benchmarks)."""
    proc = dry_run(tmp_path, "--configfile", str(REPO / "config/papers/evolve.yaml"))
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", proc.stdout, re.M)}
    assert counts["evolve_pool_generate"] == 8 * 32 and counts["evolve_pool_merge"] == 8  # evolve.pool.shards
    assert counts["evolve_dataset"] == counts["evolve_grpo"] == counts["evolve_matrix_merge"] == 4
    assert counts["evolve_matrix"] == 4 * 4  # evolve.matrix.shards
    assert counts["evolve_suite"] == counts["evolve_generate_merge"] == 3
    assert counts["evolve_generate"] == 3 * 2  # evolve.test_shards
    # the refiner and test writer is the paper's GPT-4.1-mini behind an API: client jobs that
    # load no model and ask for no GPU (and run locally: the evolve rehearsal counts them)
    for rule in ("evolve_refine", "evolve_generate"):
        blocks = re.findall(rf"^rule {rule}:\n((?:    .*\n)+)", proc.stdout, re.M)
        assert blocks and all("resources: tmpdir=/tmp\n" in b and "resources/models" not in b for b in blocks)
    assert counts["evolve_eval_generate"] == 5 * 7
    assert counts["evolve_download"] == 5


# The SFT records of the two equivalence games end with an answer the model generated at
# most <role>.sampling.max_new_tokens long, after a prompt of the instructions and the
# programs (a thousand tokens or two). TRL keeps the start of a longer record, so a limit
# under answer + prompt cuts the program, the input or the verdict off long answers.
PROMPT_ROOM = 1024


@pytest.mark.parametrize(
    "paper, agent, answering",
    [("sinq", "alice", "alice"), ("sinq", "bob", "bob"), ("seq", "alice", "alice"), ("seq", "bob", "bob")],
)
def test_paper_training_lengths_hold_the_longest_answer_they_train_on(paper, agent, answering):
    cfg = load_as_snakemake((f"config/papers/{paper}.yaml",))[paper]
    answer = int(cfg[answering]["sampling"]["max_new_tokens"])
    assert int(cfg["training"][agent]["max_length"]) >= answer + PROMPT_ROOM, (paper, agent)
