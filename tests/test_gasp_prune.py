"""``gasp.update.keep_states: checkpoints`` (selfplay.tracks.gasp.prune): before an update
trains, the state one step behind the one it starts from loses its optimizer state, and
its weights unless an evaluated checkpoint loads it (directly or through skipped updates);
the base model is never touched; records stay, ``pruned.json`` says what went; loading a
pruned state fails in one line; a job killed while it deletes finishes when rerun.

The states are small folders holding the files a real state holds (names from
selfplay.train.rl.recorded); the trainer is replaced by a function that writes such a
folder, so the pruning runs through the real ``run_update`` of the workflow's job.
tests/test_workflow_gasp.py runs the setting with the real tiny model when asked to."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from workflow_helpers import default_config

from selfplay.config import validate_config
from selfplay.errors import UserError
from selfplay.pipeline import agents
from selfplay.pipeline import gasp as steps
from selfplay.records import read_json, write_jsonl
from selfplay.tracks.gasp import prune
from selfplay.tracks.gasp import settings as gasp_settings

HEAVY = ["optimizer.pt", "sharded/.metadata", "sharded/__0_0.distcp", "policy/adapter_model.safetensors"]
FULL_HEAVY = ["policy/model-00001-of-00002.safetensors", "policy/model-00002-of-00002.safetensors"]
RECORDS = [
    "policy_state.json",
    "training_record.json",
    "scheduler.pt",
    "rng.pt",
    "policy/adapter_config.json",
    "policy/tokenizer.json",
    "policy/tokenizer_config.json",
    "policy/model.safetensors.index.json",
]


def make_state(folder: Path, finetune: str = "lora", previous: str | None = None) -> Path:
    for name in HEAVY + (FULL_HEAVY if finetune == "full" else []):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"w" * 100)
    for name in RECORDS:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps({"finetune": finetune, "format": 1}))
    (folder / "training_record.json").write_text(json.dumps({"previous_state": previous}))
    (folder / ".snakemake_timestamp").write_text("")
    return folder


def config(keep: str | None) -> dict:
    cfg = copy.deepcopy(default_config())
    if keep is not None:
        cfg["gasp"]["update"]["keep_states"] = keep
    cfg = validate_config(cfg)
    gasp_settings.check(cfg)  # what `snakemake -n` runs: the trainer must not see the key
    return cfg


@pytest.fixture
def trainer(monkeypatch):
    """The recorded update replaced by one that writes a state folder recording the state
    it started from, as the real one does (and records what it was given: the trainer's
    settings must not carry keep_states)."""
    from selfplay.train.rl import recorded

    calls = []

    def fake_update(**kwargs):
        calls.append(kwargs)
        make_state(Path(kwargs["out_state"]), previous=kwargs["previous_state"])
        return {"trained": True}

    monkeypatch.setattr(recorded, "update_from_files", fake_update)
    return calls


def rollouts(tmp_path: Path, rows: int = 1) -> str:
    path = tmp_path / f"rollouts{rows}.jsonl"
    write_jsonl(path, [{"messages": [], "outputs": ["x"], "meta": {}}] * rows)
    return str(path)


def update(tmp_path, cfg, previous, out, evaluated=(), rows=1):
    return steps.run_update(
        cfg,
        "gasp",
        0,
        "model",
        str(previous) if previous else None,
        rollouts(tmp_path, rows),
        str(out),
        evaluated=[str(e) for e in evaluated],
    )


def whole(state: Path, names=HEAVY) -> bool:
    return all((state / n).is_file() for n in names) and not (state / "pruned.json").exists()


def test_checkpoints_prunes_the_state_one_behind_and_keeps_its_records(tmp_path, trainer):
    cfg = config("checkpoints")
    a = make_state(tmp_path / "iter1" / "lemma" / "state", "full")
    b, c = tmp_path / "iter1" / "lift" / "state", tmp_path / "iter1" / "solver" / "state"
    update(tmp_path, cfg, a, b)
    assert "keep_states" not in trainer[0]["settings"]
    assert whole(a, HEAVY + FULL_HEAVY)  # b's update may still be rerun: a stays whole
    update(tmp_path, cfg, b, c)  # b's update has finished: a goes
    for name in HEAVY + FULL_HEAVY:
        assert not (a / name).exists(), name
    assert not (a / "sharded").exists()
    for name in RECORDS + [".snakemake_timestamp"]:
        assert (a / name).is_file(), name
    marker = read_json(a / "pruned.json")
    assert sorted(marker["removed"]) == sorted(
        ["optimizer.pt", "sharded"] + [n for n in HEAVY + FULL_HEAVY if n.startswith("policy/")]
    )
    assert marker["bytes"] == 100 * 6 and "keep_states: checkpoints" in marker["setting"]
    assert marker["policy_kept"] is False and "iter1/solver/state" in marker["by"]
    assert marker["replaced_by"] == str(b)
    # the run's last two states are whole
    assert whole(b) and whole(c)


def test_an_evaluated_checkpoint_keeps_its_policy_and_loses_its_optimizer_state(tmp_path, trainer):
    cfg = config("checkpoints")
    ck = make_state(tmp_path / "iter2" / "solver" / "state", "full")
    n1, n2 = tmp_path / "iter3" / "lemma" / "state", tmp_path / "iter3" / "lift" / "state"
    update(tmp_path, cfg, ck, n1, evaluated=[ck])
    update(tmp_path, cfg, n1, n2, evaluated=[ck])
    assert not (ck / "optimizer.pt").exists() and not (ck / "sharded").exists()
    assert all((ck / n).is_file() for n in HEAVY + FULL_HEAVY if n.startswith("policy/"))
    marker = read_json(ck / "pruned.json")
    assert marker["policy_kept"] is True and sorted(marker["removed"]) == ["optimizer.pt", "sharded"]
    assert marker["bytes"] == 300 and "evaluated checkpoint" in marker["reason"]
    # the benchmark layer (and any phase) still loads the fully fine-tuned model
    assert agents.state_policy("base", str(ck)) == (str(ck / "policy"), None)
    # training on from it needs the optimizer state: refused in one line
    with pytest.raises(UserError) as exc:
        update(tmp_path, cfg, ck, tmp_path / "again", evaluated=[ck])
    text = str(exc.value)
    assert "\n" not in text and "optimizer state was pruned" in text and "keep_states" in text
    # the first update starts from the base model: nothing to prune, nothing fails
    update(tmp_path, cfg, None, tmp_path / "iter1" / "lemma" / "state", evaluated=[ck])
    assert (tmp_path / "iter1" / "lemma" / "state" / "policy_state.json").is_file()
    update(tmp_path, cfg, tmp_path / "iter1" / "lemma" / "state", tmp_path / "iter1" / "lift" / "state")
    assert whole(tmp_path / "iter1" / "lemma" / "state")  # its previous was the base model


@pytest.mark.parametrize("keep", ["all", None])
def test_all_prunes_nothing(tmp_path, trainer, keep):
    cfg = config(keep)
    make_state(tmp_path / "a")
    for prev, new in zip("abc", "bcd"):
        update(tmp_path, cfg, tmp_path / prev, tmp_path / new)
    assert all(whole(tmp_path / s) for s in "abcd")
    assert keep is None or cfg["gasp"]["update"]["keep_states"] == "all"


def test_loading_a_pruned_state_fails_in_one_line_naming_the_setting(tmp_path, trainer):
    cfg = config("checkpoints")
    a = make_state(tmp_path / "a")
    update(tmp_path, cfg, a, tmp_path / "b")
    update(tmp_path, cfg, tmp_path / "b", tmp_path / "c")
    for load in (
        lambda: agents.state_policy("base", str(a)),  # a phase job, or the benchmark layer
        lambda: update(tmp_path, cfg, a, tmp_path / "again"),  # a rerun of b's update
    ):
        with pytest.raises(UserError) as exc:
            load()
        text = str(exc.value)
        assert "\n" not in text and "gasp.update.keep_states" in text and "pruned" in text
        assert "--forcerun" in text and str(a) in text


def test_an_update_killed_while_it_prunes_finishes_the_deletion_when_rerun(tmp_path, trainer, monkeypatch):
    """A cluster's time limit or a preemption can stop the job mid-deletion; Snakemake then
    reruns it. Its rerun starts from a whole state, so it trains and finishes the pruning."""
    from selfplay.tracks.gasp import prune as prune_module

    cfg = config("checkpoints")
    a, b, c = make_state(tmp_path / "a", "full"), tmp_path / "b", tmp_path / "c"
    update(tmp_path, cfg, a, b)
    real_rmtree = prune_module.shutil.rmtree

    def killed(path, *args, **kwargs):
        raise KeyboardInterrupt("SIGTERM from the scheduler")

    monkeypatch.setattr(prune_module.shutil, "rmtree", killed)  # sharded/ goes first: killed there
    with pytest.raises(KeyboardInterrupt):
        update(tmp_path, cfg, b, c)
    assert (a / "pruned.json").is_file() and (a / "sharded").is_dir() and not c.exists()
    monkeypatch.setattr(prune_module.shutil, "rmtree", real_rmtree)
    update(tmp_path, cfg, b, c)  # the rerun
    assert not [n for n in HEAVY + FULL_HEAVY if (a / n).exists()]
    assert whole(b) and (c / "policy_state.json").is_file()


def test_a_skip_chain_prunes_the_state_it_leads_to_unless_an_evaluated_checkpoint_loads_it(tmp_path, trainer):
    cfg = config("checkpoints")
    lemma2 = make_state(tmp_path / "iter2" / "lemma" / "state")
    lift2, solver2 = tmp_path / "iter2" / "lift" / "state", tmp_path / "iter2" / "solver" / "state"
    update(tmp_path, cfg, lemma2, lift2, evaluated=[solver2])
    # iteration 2's solver update skipped: the checkpoint ck_..._i2 (evaluated) is lift2's state
    update(tmp_path, cfg, lift2, solver2, evaluated=[solver2], rows=0)
    assert read_json(solver2 / "skipped.json")["use_state"] == str(lift2)
    # a skipped update prunes too (lift2's update has run): lemma2, which nothing evaluated loads
    assert read_json(lemma2 / "pruned.json")["policy_kept"] is False and whole(lift2)
    lemma3, lift3 = tmp_path / "iter3" / "lemma" / "state", tmp_path / "iter3" / "lift" / "state"
    update(tmp_path, cfg, solver2, lemma3, evaluated=[solver2])  # starts from lift2, through solver2
    assert whole(lift2)  # lemma3's update may still rerun
    update(tmp_path, cfg, lemma3, lift3, evaluated=[solver2])
    # lift2 is the evaluated checkpoint's policy: kept, its optimizer state gone
    assert (lift2 / "policy" / "adapter_model.safetensors").is_file() and not (
        lift2 / "optimizer.pt"
    ).exists()
    assert read_json(lift2 / "pruned.json")["policy_kept"] is True
    assert agents.state_policy("base", str(solver2)) == ("base", str(lift2 / "policy"))
    # lemma3 is one behind lift3, which this skipped update would have started from
    update(tmp_path, cfg, lift3, tmp_path / "iter3" / "solver" / "state", evaluated=[solver2], rows=0)
    assert read_json(lemma3 / "pruned.json")["replaced_by"] == str(lift3)
    assert not (lemma3 / "policy" / "adapter_model.safetensors").exists()
    assert agents.state_policy("base", str(tmp_path / "iter3" / "solver" / "state")) == (
        "base",
        str(lift3 / "policy"),
    )
    with pytest.raises(UserError, match="pruned"):
        agents.state_policy("base", str(lemma3))


def test_a_bundle_replay_restores_a_pruned_state_without_its_marker(tmp_path, trainer):
    cfg = config("checkpoints")
    prev = make_state(tmp_path / "bundle" / "a")
    update(tmp_path, cfg, prev, tmp_path / "bundle" / "b")
    update(tmp_path, cfg, tmp_path / "bundle" / "b", tmp_path / "bundle" / "c")
    record = steps.restore_update(str(prev), str(tmp_path / "replay" / "a"))
    assert record["pruned_in_run"]["setting"].endswith("keep_states: checkpoints")
    assert not (tmp_path / "replay" / "a" / "pruned.json").exists()
    # replayed generation only names the adapter, it loads no weights
    assert agents.state_policy("base", str(tmp_path / "replay" / "a")) == (
        "base",
        str(tmp_path / "replay" / "a" / "policy"),
    )


def test_a_bad_value_is_refused_naming_the_key():
    cfg = validate_config(copy.deepcopy(default_config()))
    cfg["gasp"]["update"]["keep_states"] = "last"
    with pytest.raises(UserError, match=r"gasp\.update\.keep_states"):
        gasp_settings.check(cfg)


def test_the_kept_states_are_the_evaluated_checkpoints():
    cfg = validate_config(copy.deepcopy(default_config()))
    cfg["gasp"]["iterations"], cfg["gasp"]["eval_every"] = 5, 2
    kept = prune.evaluated_states(cfg, "gasp_real_rl", 1)
    assert [k.rsplit("/", 3)[1:] for k in kept] == [
        ["iter2", "real", "state"],
        ["iter4", "real", "state"],
        ["iter5", "real", "state"],
    ]
    assert all("/gasp_real_rl/s1/" in k for k in kept)
    # a checkpoint the track's benchmark list names by its tag is evaluated too
    cfg["gasp"]["benchmarks"]["models"] = ["base", "ck_gasp_real_rl_s1_i3", "ck_gasp_s1_i1"]
    kept = prune.evaluated_states(cfg, "gasp_real_rl", 1)
    assert [k.rsplit("/", 3)[1] for k in kept] == ["iter2", "iter3", "iter4", "iter5"]
