"""The shared benchmark layer: modes, classification metrics, host-side judging of
model-written code, the EvalPlus adapters (with HumanEval's ground truth through our
sandbox), config checks and table layouts."""

from __future__ import annotations

import copy
import json

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks.evalplus import (
    DATA,
    HumanEval,
    HumanEvalPlus,
    Mbpp,
    MbppPlus,
    check_with_oracle,
    extract_code,
    human_eval_rows,
)
from selfplay.evaluate.layout import table_layout
from selfplay.evaluate.model_tags import expand as expand_models
from selfplay.evaluate.modes import EvalMode
from selfplay.evaluate.python_calls import args_source, judge, parse_args, run_calls, same_value
from selfplay.evaluate.settings import check_evaluation, track_runs
from selfplay.metrics.classification import binary_scores, majority_vote
from selfplay.sandbox import Sandbox

GREEDY = EvalMode("greedy", 1, False, "single", {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 8})


# An EvalPlus benchmark's settings as the schema fills them in.
EVALPLUS = {"timeout": 3.0, "max_seconds": 30.0, "min_time_limit": 4.0, "time_limit_factor": 4.0}


def cfg_for(name, **extra):
    return {"evaluation": {"benchmarks": {name: {**EVALPLUS, **extra}}}}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2) as sb:
        yield sb


# --- metrics and modes -------------------------------------------------------------


def test_binary_scores_count_unreadable_answers_as_wrong_but_not_positive():
    gold = ["yes", "yes", "no", "no", "yes"]
    pred = ["yes", None, "yes", None, "no"]
    s = binary_scores(gold, pred, "yes")
    assert (s["tp"], s["fp"], s["fn"], s["tn"], s["unparsed"]) == (1, 1, 2, 0, 2)
    assert s["accuracy"] == pytest.approx(1 / 5)
    assert s["precision"] == pytest.approx(1 / 2)
    assert s["recall"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_binary_scores_undefined_precision_is_none_and_f1_zero_when_recall_is_zero():
    s = binary_scores(["yes", "no"], ["no", "no"], "yes")
    assert s["precision"] is None and s["recall"] == 0.0 and s["f1"] == 0.0
    assert binary_scores([], [], "yes")["accuracy"] is None
    with pytest.raises(UserError):
        binary_scores(["yes"], [], "yes")


def test_majority_vote_ignores_unreadable_and_breaks_ties_by_first_seen():
    assert majority_vote(["B", None, "A", "B", "A", None]) == "B"
    assert majority_vote(["A", "B", "B"]) == "B"
    assert majority_vote([None, None]) is None


def test_modes_refuse_inconsistent_settings():
    good = {
        "samples": 9,
        "cot": False,
        "aggregate": "majority",
        "sampling": {"temperature": 1.0, "top_p": 1.0, "max_new_tokens": 4},
    }
    assert EvalMode.from_config("majority", good).samples == 9
    with pytest.raises(UserError, match="exactly one sample"):
        EvalMode.from_config("x", {**good, "aggregate": "single"})
    with pytest.raises(UserError, match="aggregate"):
        EvalMode.from_config("x", {**good, "aggregate": "vote"})
    params = EvalMode.from_config("majority", good).sampling_params(7, max_new_tokens=32)
    assert (params.n, params.seed, params.max_new_tokens, params.temperature) == (9, 7, 32, 1.0)


# --- judging code in the host -------------------------------------------------------


def test_arguments_round_trip_with_dict_order_special_floats_and_sets():
    args = ({"b": 1, "a": 2}, [float("inf"), -0.5], {3, 1}, frozenset({2}), (1,), b"x", None, True)
    back = parse_args(args_source(args))
    assert back == args and list(back[0]) == ["b", "a"]
    with pytest.raises(ValueError):
        parse_args("(__import__('os'),)")


def test_values_compare_like_python_equality_with_float_tolerance():
    enc = lambda v: ["float", repr(v)] if isinstance(v, float) else ["int", v]  # noqa: E731
    assert same_value(["int", 2], ["float", "2.0"])
    assert same_value(enc(0.1 + 0.2), enc(0.3))
    assert not same_value(enc(0.31), enc(0.3))
    assert not same_value(["object", "Fake", "Fake()"], ["int", 1])
    assert same_value(["list", [enc(1.0000000001)]], ["list", [enc(1.0)]])


def test_calls_are_judged_outside_the_program(sandbox):
    tests = [
        {"args": args_source([2, 3]), "expected": ["int", 5]},
        {"args": args_source([-1, 1]), "expected": ["int", 0]},
    ]
    calls = [t["args"] for t in tests]

    def verdict(code):
        return judge(run_calls(sandbox, code, "add", calls, 2.0, 10.0), tests)[:2]

    assert verdict("def add(a, b):\n    return a + b\n") == (True, None)
    assert verdict("def add(a, b):\n    return a - b\n") == (False, "wrong_output")
    # a program cannot report its own pass: exiting, printing, forging equality all fail
    assert verdict("import os\nos._exit(0)\n")[0] is False
    assert verdict("import sys\nprint('all tests passed')\nsys.exit(0)\n")[0] is False
    assert verdict(
        "class Eq:\n    def __eq__(self, o):\n        return True\ndef add(a, b):\n    return Eq()\n"
    ) == (False, "wrong_output")
    assert verdict("def add(a, b):\n    raise ValueError('no')\n") == (False, "exception:ValueError")
    assert verdict("def plus(a, b):\n    return a + b\n") == (False, "missing_entry_point")
    assert verdict("def add(a, b):\n    while True:\n        pass\n")[1].startswith("timeout")
    assert verdict("def add(a, b)\n    return a + b\n")[1] == "exception:SyntaxError"


# --- EvalPlus ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def humaneval_items():
    items, skipped = HumanEval().prepare(None, {**EVALPLUS, "limit": None}, {})
    return items, skipped


def test_humaneval_canonical_solutions_all_pass_through_our_sandbox_and_scorer(humaneval_items):
    items, skipped = humaneval_items
    assert skipped == [] and len(items) == 164
    assert all(item["tests"] for item in items)
    rows = {r["task_id"]: r for r in human_eval_rows()}
    samples = [
        Sample(
            i["id"],
            0,
            f"Solution:\n```python\n{rows[i['id']]['prompt']}{rows[i['id']]['canonical_solution']}\n```\n",
        )
        for i in items
    ]
    scored = HumanEval().score({i["id"]: i for i in items}, samples, GREEDY, cfg_for("humaneval"))
    assert [r["id"] for r in scored if not r["passed"]] == []
    summary = HumanEval().summarise({i["id"]: i for i in items}, scored, GREEDY)
    assert summary["pass@1"] == 1.0 and summary["n"] == 164


def test_humaneval_wrong_solutions_fail(humaneval_items):
    items = {i["id"]: i for i in humaneval_items[0][:20]}
    rows = {r["task_id"]: r for r in human_eval_rows()}
    # each problem answered with the next problem's solution: none may pass
    ids = sorted(items, key=lambda t: int(t.split("/")[1]))
    samples = [
        Sample(a, 0, "```python\n" + rows[b]["prompt"] + rows[b]["canonical_solution"] + "\n```")
        for a, b in zip(ids, ids[1:] + ids[:1])
    ]
    scored = HumanEval().score(items, samples, GREEDY, cfg_for("humaneval"))
    assert not any(r["passed"] for r in scored)


def test_humaneval_32_takes_any_root():
    items, _ = HumanEval().prepare(None, {**EVALPLUS, "limit": 33}, {})
    item = next(i for i in items if i["id"] == "HumanEval/32")
    assert item["oracle"] == "poly_root"
    for test in item["tests"]:
        xs = parse_args(test["args"])[0]
        assert any(xs)
        # the reference's root passes; a value off the root fails even if "close" in x
        assert check_with_oracle("poly_root", test, test["expected"], item["atol"])
        assert not check_with_oracle("poly_root", test, ["float", repr(1e6)], item["atol"])
    # the oracle reads the polynomial, not the reference's value: x = 1 is a root of 1 - x
    fake = {"args": args_source([[1, -1]]), "expected": ["float", "123.0"]}
    assert check_with_oracle("poly_root", fake, ["float", "1.0"], 1e-4)


@pytest.mark.parametrize("cls", [HumanEvalPlus, Mbpp, MbppPlus])
def test_evalplus_smoke_references_pass_and_plus_adds_tests(cls):
    bench = cls()
    items, skipped = bench.prepare(None, EVALPLUS, {})
    assert skipped == [] and items
    raw = {
        json.loads(line)["task_id"]: json.loads(line)
        for line in (DATA / bench.smoke).read_text().splitlines()
    }
    for item in items:
        row = raw[item["id"]]
        expected = len(row["base_input"]) + (len(row["plus_input"]) if bench.plus else 0)
        assert len(item["tests"]) == expected
    samples = []
    for item in items:
        row = raw[item["id"]]
        code = (
            row["prompt"] + row["canonical_solution"]
            if bench.family == "humaneval"
            else row["canonical_solution"]
        )
        samples.append(Sample(item["id"], 0, f"```python\n{code}\n```"))
        samples.append(Sample(item["id"], 1, "I am not sure."))
    mode = EvalMode("two", 2, False, "mean", {})
    scored = bench.score({i["id"]: i for i in items}, samples, mode, cfg_for(bench.name))
    assert all(r["passed"] for r in scored if r["sample"] == 0)
    # EvalPlus runs the first line of an answer without code (it does not parse): a failure
    assert not any(r["passed"] for r in scored if r["sample"] == 1)
    assert bench.summarise({i["id"]: i for i in items}, scored, mode, ks=(1, 2))["pass@2"] == 1.0


def test_mbpp_plus_catches_a_solution_that_only_passes_the_base_tests():
    items, _ = MbppPlus().prepare(None, EVALPLUS, {})
    base_items, _ = Mbpp().prepare(None, EVALPLUS, {})
    item = next(i for i in items if i["entry_point"] == "max_of_list")
    # right on the base inputs (which have no repeated maximum and are never all-zero), wrong on [0, 0, 0]
    code = "```python\ndef max_of_list(nums):\n    return max(nums) or None\n```"
    plus = MbppPlus().score({item["id"]: item}, [Sample(item["id"], 0, code)], GREEDY, cfg_for("mbpp_plus"))
    base_item = next(i for i in base_items if i["id"] == item["id"])
    base = Mbpp().score({item["id"]: base_item}, [Sample(item["id"], 0, code)], GREEDY, cfg_for("mbpp"))
    assert base[0]["passed"] and not plus[0]["passed"]


def test_extracting_programs_keeps_what_the_entry_point_reaches_as_evalplus_sanitizes():
    text = (
        "Here it is.\n```python\nimport math\n\ndef helper(x):\n    return x\n\n\ndef f(xs):\n"
        "    return helper(len(xs))\n\nprint(f([1]))\n```\nDone."
    )
    code = extract_code(text, "f")
    assert code == "import math\ndef helper(x):\n    return x\ndef f(xs):\n    return helper(len(xs))"
    assert extract_code("", "f") is None


# --- config checks and layouts ---------------------------------------------------------


def test_config_check_refuses_unknown_benchmarks_modes_and_majority_on_code():
    import yaml

    from selfplay.config import validate_config

    cfg = yaml.safe_load(open("config.yaml"))
    validate_config(cfg)
    base = copy.deepcopy(cfg)
    base["sinq"]["benchmarks"]["runs"] = {"humaneval": ["greedy"]}
    check_evaluation(base, "sinq")
    for runs, message in [
        ({"nosuch": ["greedy"]}, "unknown benchmark"),
        ({"humaneval": ["nosuch"]}, "not defined"),
        ({"humaneval": ["majority"]}, "majority vote"),
    ]:
        bad = copy.deepcopy(base)
        bad["sinq"]["benchmarks"]["runs"] = runs
        with pytest.raises(UserError, match=message):
            check_evaluation(bad, "sinq")
    bad = copy.deepcopy(base)
    bad["sinq"]["benchmarks"]["models"] = ["alice_r9"]
    with pytest.raises(UserError, match="alice_r"):
        check_evaluation(bad, "sinq")
    bad = copy.deepcopy(base)
    bad["evaluation"]["benchmarks"]["humaneval"]["source"] = "path"
    with pytest.raises(UserError, match="path"):
        check_evaluation(bad, "sinq")


def test_table_layout_columns_follow_modes_then_models():
    runs = track_runs(
        {
            "rounds": 2,
            "benchmarks": {
                "models": ["base", "bob"],
                "runs": {"mbpp": ["greedy"], "humaneval": ["greedy", "cot"], "identifier_swap": ["greedy"]},
            },
        }
    )
    rows, columns, cells = table_layout(runs, ["mbpp", "mbpp_plus", "humaneval"])
    assert [r[1] for r in rows] == ["mbpp", "humaneval"]
    assert [c[0] for c in columns] == ["Base", "Trained Bob", "Base CoT", "Trained Bob CoT"]
    assert ("humaneval", "cot", "bob") in cells and ("mbpp", "cot", "bob") not in cells


def test_runs_expand_alice_rounds_and_take_per_benchmark_models():
    assert expand_models(["base", "alice", "alice_rounds"], 3) == ["base", "alice_r3", "alice_r1", "alice_r2"]
    runs = track_runs(
        {
            "rounds": 2,
            "benchmarks": {
                "models": ["base", "bob"],
                "runs": {
                    "haskell_mini": {"modes": ["sampled"], "models": ["base", "alice_rounds"]},
                    "pysecdb": ["greedy"],
                },
            },
        }
    )
    assert runs == [
        ("haskell_mini", "sampled", "base"),
        ("haskell_mini", "sampled", "alice_r1"),
        ("haskell_mini", "sampled", "alice_r2"),
        ("pysecdb", "greedy", "base"),
        ("pysecdb", "greedy", "bob"),
    ]


def test_a_model_served_elsewhere_answers_its_share_through_the_openai_backend(tmp_path, monkeypatch):
    """Paper 001's Figure 4 models: generation goes to an OpenAI-compatible server (here
    the test double of tests/test_llm_backends.py), on a seeded share of the items."""
    import yaml
    from test_llm_backends import FakeChatServer

    from selfplay.config import validate_config
    from selfplay.pipeline import evaluate as steps
    from selfplay.records import read_jsonl, write_jsonl

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    items, _ = steps.benchmark("identifier_swap").prepare(
        None, cfg["evaluation"]["benchmarks"]["identifier_swap"] | {"limit": None}, cfg
    )
    write_jsonl(tmp_path / "items.jsonl", items)
    server = FakeChatServer()
    monkeypatch.setenv("SELFPLAY_TEST_KEY", "k")
    other = {
        "tag": "remote",
        "model": "remote-model",
        "base_url": server.url,
        "api_key_env": "SELFPLAY_TEST_KEY",
        "fraction": 0.5,
    }
    try:
        steps.generate(
            cfg,
            "identifier_swap",
            "greedy",
            "remote",
            str(tmp_path / "items.jsonl"),
            None,
            None,
            str(tmp_path / "gen.jsonl"),
            other=other,
        )
    finally:
        server.close()
    records = read_jsonl(tmp_path / "gen.jsonl")
    assert len(records) == (len(items) + 1) // 2 and len(items) >= 4
    assert all(r["outputs"][0].startswith("remote-model|") for r in records)
    assert {r["meta"]["model"] for r in records} == {"remote"}
    assert all(body["model"] == "remote-model" for body in server.bodies)
    # the same share for every mode; another model tag draws another share
    again = steps.items_for(cfg, "remote", items, other)
    assert [i["id"] for i in again] == [r["meta"]["item"] for r in records]
    assert steps.items_for(cfg, "remote", items, None) == items


def test_other_model_tags_must_not_clash():
    import yaml

    from selfplay.config import validate_config

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    cfg["sinq"]["benchmarks"]["other_models"] = [
        {"tag": "bob", "model": "m", "base_url": "http://x/v1", "api_key_env": "K", "fraction": 1.0}
    ]
    with pytest.raises(UserError, match="other_models"):
        check_evaluation(cfg, "sinq")
    cfg["sinq"]["benchmarks"]["other_models"][0]["tag"] = "remote"
    cfg["sinq"]["benchmarks"]["runs"] = {
        "identifier_swap": {"modes": ["greedy"], "models": ["remote", "nobody"]}
    }
    with pytest.raises(UserError, match="nobody"):
        check_evaluation(cfg, "sinq")
    cfg["sinq"]["benchmarks"]["runs"] = {
        "identifier_swap": {"modes": ["greedy"], "models": ["remote", "base"]}
    }
    check_evaluation(cfg, "sinq")


def test_ground_truth_scores_every_adapters_right_answers_and_reports_wrong_ones(tmp_path):
    import yaml

    from selfplay.config import validate_config
    from selfplay.pipeline import evaluate as steps
    from selfplay.records import read_json, write_jsonl
    from selfplay.report.evaluation import benchmarks_table

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    gt, skipped = {}, {}
    for name in ("mbpp_plus", "identifier_swap"):
        items, rest = steps.benchmark(name).prepare(None, cfg["evaluation"]["benchmarks"][name], cfg)
        write_jsonl(tmp_path / f"{name}.jsonl", items)
        write_jsonl(tmp_path / f"{name}.skipped.jsonl", rest)
        steps.ground_truth(
            cfg,
            name,
            str(tmp_path / f"{name}.jsonl"),
            str(tmp_path / f"{name}.s.jsonl"),
            str(tmp_path / f"{name}.json"),
        )
        summary = read_json(tmp_path / f"{name}.json")
        assert (
            summary["checked"] and summary["right"] == summary["n"] == len(items) and summary["score"] == 1.0
        )
        gt[name], skipped[name] = str(tmp_path / f"{name}.json"), str(tmp_path / f"{name}.skipped.jsonl")
    # a broken reference is caught: the check is not true by construction
    items = [
        dict(i, reference=i["reference"].replace("return", "return None and"))
        for i in MbppPlus().prepare(None, EVALPLUS, {})[0]
    ]
    write_jsonl(tmp_path / "broken.jsonl", items)
    broken = steps.ground_truth(
        cfg,
        "mbpp_plus",
        str(tmp_path / "broken.jsonl"),
        str(tmp_path / "b.s.jsonl"),
        str(tmp_path / "b.json"),
    )
    assert broken["right"] == 0 and len(broken["wrong"]) == len(items)
    frame = benchmarks_table(
        gt,
        {},
        skipped,
        {"mbpp_plus": "smoke", "identifier_swap": "smoke"},
        str(tmp_path / "t.csv"),
        str(tmp_path / "t.md"),
    )
    assert list(frame["Right answers scored right"]) == ["4/4", "2/2"]


def test_training_split_is_before_the_evaluation_window(tmp_path):
    import yaml

    from selfplay.config import validate_config
    from selfplay.pipeline import evaluate as steps
    from selfplay.records import read_jsonl

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    steps.training_split(cfg, "livecodebench", None, str(tmp_path / "t.jsonl"), str(tmp_path / "s.jsonl"))
    train = read_jsonl(tmp_path / "t.jsonl")
    evaluation, _ = steps.benchmark("livecodebench").prepare(
        None, cfg["evaluation"]["benchmarks"]["livecodebench"] | {"limit": None}, cfg
    )
    assert train and evaluation and not {i["id"] for i in train} & {i["id"] for i in evaluation}
    with pytest.raises(UserError, match="no training split"):
        steps.training_split(cfg, "humaneval", None, str(tmp_path / "x.jsonl"), str(tmp_path / "y.jsonl"))


def test_a_patch_beyond_the_models_context_is_left_out_of_the_cell_and_said_in_the_table(
    tiny_model_dir, tmp_path
):
    """Paper 001 drops the PySecDB patches beyond its model's context. With the real tiny
    model served at a small context, one long patch is not generated (its record says
    why), the cell scores the others, and the table's notes count it: before, the engine
    refused it and the whole job failed."""
    import yaml

    from selfplay.config import validate_config
    from selfplay.pipeline import evaluate as steps
    from selfplay.records import read_json, read_jsonl, write_jsonl
    from selfplay.report.evaluation import base_vs_trained

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    cfg["backend"] = {**cfg["backend"], "max_model_len": 400}
    items, _ = steps.benchmark("pysecdb").prepare(None, {"limit": 3}, cfg)
    items[1] = {**items[1], "patch": items[1]["patch"] + "+    total = total + step(total)\n" * 120}
    write_jsonl(tmp_path / "items.jsonl", items)
    write_jsonl(tmp_path / "skipped.jsonl", [])
    gen = tmp_path / "gen.jsonl"
    steps.generate(
        cfg, "pysecdb", "greedy", "base", str(tmp_path / "items.jsonl"), str(tiny_model_dir), None, str(gen)
    )
    records = read_jsonl(gen)
    assert [bool(r.get("unfit")) for r in records] == [False, True, False]
    summary = steps.score(
        cfg,
        "pysecdb",
        "greedy",
        str(tmp_path / "items.jsonl"),
        str(gen),
        str(tmp_path / "scored.jsonl"),
        str(tmp_path / "summary.json"),
        str(tmp_path / "skipped.jsonl"),
    )
    assert summary["over_context"] == 1 and summary["n"] == 2
    assert {r["id"] for r in read_jsonl(tmp_path / "scored.jsonl")} == {items[0]["id"], items[2]["id"]}
    assert read_json(tmp_path / "summary.json") == summary
    base_vs_trained(
        {"base": str(tmp_path / "summary.json"), "trained": str(tmp_path / "summary.json")},
        ["accuracy"],
        str(tmp_path / "t.csv"),
        str(tmp_path / "t.md"),
        "PySecDB",
    )
    assert (
        "Base Model: 1 items left out, their prompts do not fit the model's context"
        in (tmp_path / "t.md").read_text()
    )


@pytest.mark.parametrize("bench_name", ["pysecdb", "humaneval"])
def test_a_thinking_mode_scores_only_what_follows_the_thinking(bench_name, tmp_path):
    """Paper 000 (an R1 distillation) and paper 002 (Qwen3 in thinking mode) evaluate models
    that reason first. An answer is what follows </think>; an output still thinking when its
    budget ran out has none, whatever its reasoning says or drafts."""
    import yaml

    from selfplay.config import validate_config
    from selfplay.pipeline import evaluate as steps
    from selfplay.records import read_jsonl, write_jsonl

    cfg = validate_config(yaml.safe_load(open("config.yaml")))
    cfg["evaluation"]["modes"]["think"] = {
        "samples": 2,
        "cot": False,
        "aggregate": "mean",
        "thinking": True,
        "sampling": {"temperature": 0.6, "top_p": 1.0, "max_new_tokens": 64},
    }
    items, _ = steps.benchmark(bench_name).prepare(
        None, steps.bench_settings(cfg, bench_name) | {"limit": 1}, cfg
    )
    item = items[0]
    if bench_name == "pysecdb":
        right = item["label"]
        wrong = "No" if right == "Yes" else "Yes"
    else:
        right = steps.benchmark(bench_name).reference_answers([item])[0].text
        wrong = "```python\ndef nothing():\n    pass\n```"
    # sample 0 finishes thinking and answers right; sample 1 drafts the right answer while
    # thinking, is cut off, and so has no answer
    outputs = [f"Let me think. {wrong}? Hmm.\n</think>\n\n{right}", f"First idea: {right}. Or {wrong}..."]
    write_jsonl(tmp_path / "items.jsonl", [item])
    write_jsonl(tmp_path / "skipped.jsonl", [])
    write_jsonl(tmp_path / "gen.jsonl", [{"meta": {"item": item["id"], "model": "base"}, "outputs": outputs}])
    summary = steps.score(
        cfg,
        bench_name,
        "think",
        str(tmp_path / "items.jsonl"),
        str(tmp_path / "gen.jsonl"),
        str(tmp_path / "scored.jsonl"),
        str(tmp_path / "summary.json"),
        str(tmp_path / "skipped.jsonl"),
    )
    rows = sorted(read_jsonl(tmp_path / "scored.jsonl"), key=lambda r: r["sample"])
    assert [bool(r.get("correct", r.get("passed"))) for r in rows] == [True, False]
    assert rows[1]["reason"] is not None
    assert summary["unfinished_thinking"] == 1
