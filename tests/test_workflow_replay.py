"""The whole SInQ workflow on recorded (hand-written) model outputs.

Generation uses the `replay` backend with answers written here, so every stage after
generation runs for real on non-empty data: sandboxed verification, Bob's scoring by
execution, difficulty labels, hard/easy selection, LoRA training of Alice (two rounds,
each from the base model on the accumulated set) and Bob on the real tiny model, and
the tables and figure. The source programs are small ones written here, put where the
sources rule would write them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from workflow_helpers import default_config, jobs_run, run_snakemake, write_config

from selfplay.data.sources import make_source
from selfplay.records import read_json, read_jsonl, write_jsonl
from selfplay.tracks.sinq.game import alice_request, bob_request, select_stage_sources
from selfplay.tracks.sinq.parse import parse_alice
from selfplay.tracks.sinq.verify import instance_id

pytestmark = pytest.mark.slow

TRAIN = {
    "add": "def add(a, b):\n    return a + b\n",
    "is_even": "def is_even(n):\n    return n % 2 == 0\n",
    "clip": "def clip(x, lo, hi):\n    return max(lo, min(x, hi))\n",
    "count_vowels": "def count_vowels(s):\n    return sum((1 for c in s if c in 'aeiou'))\n",
    "first_char": "def first_char(s):\n    return s[0] if s else ''\n",
}
TEST = {
    "double": "def double(x):\n    return 2 * x\n",
    "neg": "def neg(x):\n    return -x\n",
}


def alice_text(program: str, x: str, analysis: str = "I change one branch.") -> str:
    return (
        f"# Analysis\n{analysis}\n\n# Generated program\n```python\n{program}```\n\n"
        f"# Diverging input example\n```python\n{x}\n```\n"
    )


def bob_text(x: str | None, equivalent: str = "No") -> str:
    body = f"```python\n{x}\n```\n" if x else ""
    return f"# Analysis\nLooking at both.\n\n# Equivalent?\n{equivalent}\n\n# Diverging input example\n{body}"


# Alice's round-1 answers: three real divergences, a syntax error, an equivalent rewrite.
ALICE_ROUND1 = {
    "add": alice_text(
        "def add(a, b):\n    if a == 7:\n        return a + b + 1\n    return a + b\n", "{'a': 7, 'b': 1}"
    ),
    "is_even": alice_text("def is_even(n)\n    return n % 2\n", "{'n': 3}"),
    "clip": alice_text(
        "def clip(x, lo, hi):\n    while lo < 0:\n        pass\n    return max(lo, min(x, hi))\n",
        "{'x': 1, 'lo': -5, 'hi': 3}",
    ),
    "count_vowels": alice_text(
        "def count_vowels(s):\n    n = 0\n    for c in s:\n        if c in 'aeiou':\n"
        "            n += 1\n    return n\n",
        "{'s': 'banana'}",
    ),
    "first_char": alice_text("def first_char(s):\n    return s[0]\n", "{'s': ''}"),
}
# Bob's three answers per verified instance (-> difficulty 10 * (1 - correct / 3)).
BOB_ROUND1 = {
    "add": [bob_text("{'a': 7, 'b': 1}"), bob_text("{'a': 1, 'b': 1}"), "no sections at all"],  # 1/3 -> 6.67
    "clip": [
        bob_text("{'x': 1, 'lo': 0, 'hi': 3}"),
        bob_text(None, "Yes"),
        bob_text("{'x': 2}"),
    ],  # 0/3 -> 10
    "first_char": [bob_text("{'s': ''}")] * 3,  # 3/3 -> 0
}
ALICE_EVAL_TEST = {
    "double": alice_text(
        "def double(x):\n    if x > 100:\n        return 2 * x + 1\n    return 2 * x\n", "{'x': 101}"
    )
}
BOB_EVAL_TEST = {
    "untrained": [bob_text("{'x': 101}"), bob_text("{'x': 3}"), bob_text("{'x': 0}")],  # 1/3
    "trained": [bob_text("{'x': 500}"), bob_text("{'x': 101}"), bob_text("{'x': 3}")],  # 2/3
}


def sources(names: dict, split: str) -> list[dict]:
    return [make_source("humaneval", split, f"T/{name}", name, code) for name, code in names.items()]


def build_scenario(workdir: Path) -> dict:
    cfg = default_config()
    cfg["tracks"] = ["sinq", "seq"]  # the PSV track's workflow is tested in test_workflow_psv.py
    cfg["model"] = {"name": "tiny", "source": "local", "path": "MODEL"}  # filled by the test
    rec_file = workdir / "recordings.jsonl"
    cfg["backend"] = {"name": "replay", "files": [str(rec_file)], "on_missing": "empty"}
    sinq = cfg["sinq"]
    sinq.update(experiment="replaytest", rounds=2, shards=2)
    sinq["sources"].update(per_round=None, eval_train=None, eval_test=None)
    sinq["verify"].update(timeout_min=0.5, timeout_max=0.8)
    small = {
        "lora_r": 4,
        "lora_alpha": 8,
        "max_steps": 1,
        "batch_size": 1,
        "grad_accum": 1,
        "max_length": 1024,
    }
    sinq["training"] = {"alice": small, "bob": small}
    train, test = sources(TRAIN, "train"), sources(TEST, "test")
    data = workdir / "resources" / "data" / "sinq"
    write_jsonl(data / "humaneval_train.jsonl", train)
    write_jsonl(data / "humaneval_test.jsonl", test)

    recs = []

    def record(req, outputs):
        assert len(outputs) == req.sampling.n
        recs.append({"key": req.key, "outputs": outputs})  # the key covers the answer format too

    def instance_for(src, text):
        p = parse_alice(text, src["entry_point"])
        assert p.ok, p
        return {
            "id": instance_id(src["code"], p.program, p.input_literal),
            "code_p": src["code"],
            "code_q": p.program,
            "entry_point": src["entry_point"],
        }

    by_name = {s["entry_point"]: s for s in train + test}
    assert {s["entry_point"] for s in select_stage_sources(train, "round1", cfg)} == set(TRAIN)
    for name, text in ALICE_ROUND1.items():
        record(alice_request(by_name[name], "round1", cfg, None), [text])
    for name, answers in BOB_ROUND1.items():
        record(
            bob_request(instance_for(by_name[name], ALICE_ROUND1[name]), "round1", "untrained", cfg, None),
            answers,
        )
    for name, text in ALICE_EVAL_TEST.items():
        record(alice_request(by_name[name], "eval_test", cfg, None), [text])
        inst = instance_for(by_name[name], text)
        for who, answers in BOB_EVAL_TEST.items():
            record(bob_request(inst, "eval_test", who, cfg, None), answers)
    record_benchmarks(cfg, record)
    write_jsonl(rec_file, recs)
    return cfg


# --- paper 001's benchmark tables on recorded answers ---------------------------------
# The base model answers the first option, "No", and the right code for one MBPP+ item;
# the trained Bob answers every item right (majority: 5 of 9 right; CoT: after reasoning).
EVAL_RUNS = {
    "identifier_swap": ["greedy", "cot"],
    "pysecdb": ["greedy", "majority", "cot"],
    "codexglue": ["greedy"],
    "mbpp": ["greedy"],
    "mbpp_plus": ["greedy"],
    "humaneval": ["greedy"],
    "humaneval_plus": ["greedy"],
}


def eval_answer(bench, item, mode: str, model: str, n: int) -> list[str]:
    if bench.task == "codegen":
        right = bench.reference_answers([item])[0].text
        good = model == "bob" or item["id"] == "SmokeMbpp/1"
        return [right if good else "```python\ndef nothing():\n    pass\n```"] * n
    gold = bench.gold(item)
    other = next(label for label in bench.labels if label != gold)
    label = gold if model == "bob" else bench.labels[0 if bench.name == "identifier_swap" else 1]
    if mode == "majority":
        return [gold] * 5 + [other] * 4 if model == "bob" else [label] * n
    if mode == "cot":
        return [f"Comparing the two carefully.\nAnswer: {label}"]
    return [label]


def record_benchmarks(cfg: dict, record) -> None:
    from selfplay.config import validate_config
    from selfplay.evaluate.registry import benchmark
    from selfplay.pipeline.evaluate import eval_request

    cfg["sinq"]["benchmarks"] = {"models": ["base", "bob"], "runs": EVAL_RUNS}
    cfg["seq"]["benchmarks"] = {"runs": {}}  # the Haskell track's benchmarks: test_workflow_seq.py
    cfg["evaluation"]["check"] = {"benchmarks": ["identifier_swap", "mbpp_plus"], "base_model": []}
    filled = validate_config(yaml.safe_load(yaml.safe_dump(cfg)))
    for name, modes in EVAL_RUNS.items():
        bench = benchmark(name)
        items, _ = bench.prepare(None, filled["evaluation"]["benchmarks"][name], filled)
        for mode in modes:
            for model in ("base", "bob"):
                for item in items:
                    req = eval_request(filled, name, mode, model, item, None)
                    record(req, eval_answer(bench, item, mode, model, req.sampling.n))


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("replay_workflow")
    cfg = build_scenario(workdir)
    cfg["model"]["path"] = str(tiny_model_dir)
    write_config(workdir, cfg)
    proc = run_snakemake(workdir)
    return workdir, proc


def test_every_stage_ran(replay_run):
    workdir, proc = replay_run
    jobs = jobs_run(proc)
    assert jobs["sinq_alice_generate"] == 8 and jobs["sinq_verify"] == 8  # 4 stages x 2 shards
    assert jobs["train_alice"] == 2 + 2 and jobs["train_bob"] == 1 + 1  # SInQ's and the Haskell track's
    assert "prepare_model" not in jobs  # a local model folder is used as it is
    assert "results/tables/sinq/table1.md" in proc.stdout + proc.stderr  # the closing summary


def test_verification_and_reasons(replay_run):
    workdir, _ = replay_run
    exp = workdir / "results/sinq/replaytest"
    cands = {
        c["entry_point"]: c for s in (0, 1) for c in read_jsonl(exp / f"round1/candidates/shard{s}.jsonl")
    }
    assert {k for k, c in cands.items() if c["verified"]} == {"add", "clip", "first_char"}
    assert cands["is_even"]["reject_reason"] == "parse:syntax_error"
    assert cands["count_vowels"]["reject_reason"] == "verify:same_behaviour"
    assert cands["clip"]["check"]["q"]["status"] == "timeout"  # non-halting Q diverges
    assert cands["first_char"]["check"]["q"]["exc_type"] == "IndexError"
    assert cands["add"]["check"]["p"]["isolation"]  # the verdict says what isolation was in force
    round2 = [c for s in (0, 1) for c in read_jsonl(exp / f"round2/candidates/shard{s}.jsonl")]
    assert len(round2) == 5 and all(c["reject_reason"] == "parse:empty_output" for c in round2)


def test_difficulty_labels(replay_run):
    workdir, _ = replay_run
    exp = workdir / "results/sinq/replaytest"
    labeled = {
        i["entry_point"]: i
        for s in (0, 1)
        for i in read_jsonl(exp / f"round1/labeled_untrained/shard{s}.jsonl")
    }
    assert labeled["add"]["bob"]["n_correct"] == 1 and labeled["add"]["difficulty"] == pytest.approx(20 / 3)
    assert labeled["clip"]["difficulty"] == 10.0
    assert labeled["first_char"]["difficulty"] == 0.0
    # Bob's "Yes" and his wrong input are recorded, and neither counts as correct.
    clip = labeled["clip"]["bob"]["samples"]
    assert clip[1]["equivalent"] == "yes" and not clip[1]["correct"]
    assert clip[2]["check"]["reason"] == "source_error"  # {'x': 2} does not bind clip(x, lo, hi)


def test_training_sets_and_adapters(replay_run):
    workdir, _ = replay_run
    exp = workdir / "results/sinq/replaytest"
    for r in (1, 2):  # round 2 found nothing new, but trains again from the base on the accumulated set
        rows = read_jsonl(exp / f"round{r}/train_alice.jsonl")
        kinds = [row["kind"] for row in rows]
        assert kinds.count("alice_main") == 2  # 2 hard, easy = round(0.2 * 2) = 0
        assert kinds.count("alice_difficulty") == 3  # 2 hard + round(0.5 * 2) = 1 easy
        main = [row for row in rows if row["kind"] == "alice_main"]
        assert {m["prompt"][1]["content"].splitlines()[0] for m in main} == {
            "Difficulty level: 7",
            "Difficulty level: 10",
        }
        pred = [row for row in rows if row["kind"] == "alice_difficulty"]
        assert all(p["prompt"][1]["content"].startswith("Difficulty level: Any") for p in pred)
        assert sorted(p["completion"][0]["content"] for p in pred) == [
            "Difficulty level: 0",
            "Difficulty level: 10",
            "Difficulty level: 7",
        ]
        rec = read_json(exp / f"round{r}/adapter_alice/training_record.json")
        assert rec["trained"] is True and rec["n_examples"] == 5
        assert (exp / f"round{r}/adapter_alice/adapter_model.safetensors").is_file()
    bob_rows = read_jsonl(exp / "bob/train_bob.jsonl")
    assert len(bob_rows) == 4  # add: 1 correct answer, first_char: 3
    assert read_json(exp / "bob/adapter/training_record.json")["trained"] is True


def test_alice_round2_used_round1_adapter(replay_run):
    workdir, _ = replay_run
    exp = workdir / "results/sinq/replaytest"
    metas = [r["meta"] for s in (0, 1) for r in read_jsonl(exp / f"round2/alice/shard{s}.jsonl")]
    assert metas and all(m["adapter_dir"].endswith("round1/adapter_alice") for m in metas)
    evals = [
        r["meta"]
        for r in read_jsonl(exp / "eval_test/bob_trained/shard0.jsonl")
        + read_jsonl(exp / "eval_test/bob_trained/shard1.jsonl")
    ]
    assert evals and all(m["adapter_dir"].endswith("bob/adapter") for m in evals)


def test_tables_and_figure(replay_run):
    workdir, _ = replay_run
    t1 = (workdir / "results/tables/sinq/table1.csv").read_text().splitlines()
    assert t1[0].startswith("Source programs,Untrained")
    test_row = [line for line in t1 if line.startswith("HumanEval Test")][0].split(",")
    assert test_row[1] == "33.33%" and test_row[4] == "66.67%"
    md = (workdir / "results/tables/sinq/table1.md").read_text()
    assert re.search(r"\| HumanEval Train\s+\| n/a", md)  # no eval_train answers recorded: said, not hidden
    yields = (workdir / "results/tables/sinq/yield.csv").read_text().splitlines()
    assert yields[1] == "round1,5,4,3,2,1,5.56,constrained,constrained"  # the default constrains decoding
    reasons = (workdir / "results/tables/sinq/yield_reasons.csv").read_text()
    assert "round1,parse:syntax_error,1" in reasons
    for fig in ("figure2.png", "figure2.pdf"):
        assert (workdir / "results/figures/sinq" / fig).stat().st_size > 1000
    fig_csv = (workdir / "results/figures/sinq/figure2.csv").read_text().splitlines()
    assert fig_csv[1].startswith("0,3,5.55")


def test_rerun_does_nothing(replay_run):
    workdir, _ = replay_run
    proc = run_snakemake(workdir)
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_a_changed_setting_reruns_exactly_the_jobs_that_use_it(replay_run):
    """Every job gets the config values it reads as params: Snakemake sees a change.

    (Snakemake 9.27's `--list-changes params` lists every output that has recorded params,
    changed or not, so the plan under `--rerun-triggers params` is what is checked.)"""
    workdir, _ = replay_run
    overlay = workdir / "bob_samples.yaml"
    overlay.write_text(yaml.safe_dump({"sinq": {"bob": {"samples": 5}}}))
    files = ("--configfile", str(workdir / "config.yaml"), str(overlay))
    unchanged = run_snakemake(workdir, "-n", "--rerun-triggers", "params")
    assert not jobs_run(unchanged)
    bob_outputs = {
        str(p.relative_to(workdir))
        for p in (workdir / "results/sinq/replaytest").glob("*/bob_*/shard*.jsonl")
    }
    assert (
        len(bob_outputs) == 4 * 2 + 2 * 2
    )  # 4 stages x 2 shards untrained, 2 evaluation stages x 2 shards trained
    # Bob's generations see the change themselves (those whose inputs are unchanged say so;
    # the later ones rerun first because their inputs do); no other rule sees it.
    changed = run_snakemake(workdir, *files, "-n", "--rerun-triggers", "params")
    blocks = re.findall(r"^rule (\w+):\n(.*?)(?=^\[|^rule |\Z)", changed.stdout + changed.stderr, re.M | re.S)
    by_params = {
        re.search(r"output: (\S+)", body).group(1): rule
        for rule, body in blocks
        if "reason: Params have changed" in body
    }
    assert set(by_params.values()) == {"sinq_bob_generate"}
    assert {f"results/sinq/replaytest/round1/bob_untrained/shard{s}.jsonl" for s in (0, 1)} <= set(by_params)
    assert set(by_params) <= bob_outputs
    # The plan reruns Bob's generations and what depends on them, nothing upstream, no other track.
    # (Round 2 and the evaluations follow, since Alice's training set is picked by Bob's labels.)
    planned = run_snakemake(workdir, *files, "-n")
    plan = jobs_run(planned)
    assert plan["sinq_bob_generate"] == len(bob_outputs)
    assert {"sinq_label", "sinq_table1", "sinq_yield"} <= set(plan)
    outputs = set(re.findall(r"output: (\S+)", planned.stdout + planned.stderr))
    assert (
        not {
            f"results/sinq/replaytest/round1/{d}/shard{s}.jsonl"
            for d in ("alice", "candidates")
            for s in (0, 1)
        }
        & outputs
    )
    assert not [rule for rule in plan if rule.startswith("seq_")]


def test_one_table_builds_alone(replay_run, tmp_path):
    workdir, _ = replay_run
    # Remove the table and the figure; asking for the table rebuilds only the table.
    for p in ("results/tables/sinq/table1.md", "results/figures/sinq/figure2.png"):
        (workdir / p).unlink()
    proc = run_snakemake(workdir, "results/tables/sinq/table1.md")
    assert jobs_run(proc) == {"sinq_table1": 1}
    assert (workdir / "results/tables/sinq/table1.md").is_file()
    assert not (workdir / "results/figures/sinq/figure2.png").exists()


def test_html_report(replay_run):
    workdir, _ = replay_run
    run_snakemake(workdir)  # an earlier test removed the figure: it is rebuilt alone
    run_snakemake(workdir, "--report", str(workdir / "report.html"))
    html = (workdir / "report.html").read_text(errors="replace")
    assert "table1" in html and "figure2" in html


def test_paper_001_benchmark_tables_from_recorded_answers(replay_run):
    """Tables 2-4 and Figure 3 through the benchmark layer: prepared items, recorded
    answers, scoring (code in the sandbox, judged in the host), metrics, tables."""
    workdir, proc = replay_run
    jobs = jobs_run(proc)
    assert (
        jobs["sinq_eval_generate"] == jobs["sinq_eval_score_python"] == 2 * 10
    )  # 10 (benchmark, mode) x 2 models
    t2 = (workdir / "results/tables/sinq/table2.csv").read_text().splitlines()
    assert t2[0] == "Benchmark,Base,Trained Bob,Base CoT,Trained Bob CoT,Items,Decoding"
    # the smoke rows are shown in both orders: answering "1" is right half the time
    assert t2[1] == "Python builtin identifier swap,50.0,100.0,50.0,100.0,4,constrained"
    t3 = (workdir / "results/tables/sinq/table3.md").read_text()
    assert "Trained Bob Maj" in t3 and "Base CoT" in t3
    rows = {
        line.split(",")[0]: line.split(",")
        for line in (workdir / "results/tables/sinq/table3.csv").read_text().splitlines()[1:]
    }
    header = (workdir / "results/tables/sinq/table3.csv").read_text().splitlines()[0].split(",")
    pysecdb = dict(zip(header, rows["PySecDB"]))
    assert pysecdb["Base"] == "50.0" and pysecdb["Trained Bob Maj"] == "100.0"  # "No" is right on half
    assert (
        dict(zip(header, rows["CodeXGLUE defect detection"]))["Base Maj"] == ""
    )  # not run: empty, n/a in md
    t4 = {
        line.split(",")[0]: line.split(",")[1:3]
        for line in (workdir / "results/tables/sinq/table4.csv").read_text().splitlines()[1:]
    }
    assert t4["MBPP"] == ["50.0", "100.0"] and t4["HumanEval+"] == ["0.0", "100.0"]
    assert (workdir / "results/figures/sinq/figure3.png").stat().st_size > 1000
    summary = read_json(workdir / "results/sinq/replaytest/eval/mbpp_plus/bob/greedy.json")
    assert summary["pass@1"] == 1.0 and summary["adapter"].endswith("bob/adapter")
    gt = (workdir / "results/tables/eval/benchmarks.csv").read_text()
    assert "mbpp_plus" in gt and "4/4" in gt
