"""``gasp.update.keep_states: checkpoints`` (selfplay.tracks.gasp.prune): after an update
has written its state, the weights of the state it started from go, unless that state is
an evaluated checkpoint (directly or through a chain of skipped updates) or the base model;
records stay, ``pruned.json`` says what went; loading a pruned state fails in one line.

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


def make_state(folder: Path, finetune: str = "lora") -> Path:
    for name in HEAVY + (FULL_HEAVY if finetune == "full" else []):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"w" * 100)
    for name in RECORDS:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps({"finetune": finetune, "format": 1}))
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
    """The recorded update replaced by one that writes a state folder (and records what it
    was given: the trainer's settings must not carry keep_states)."""
    from selfplay.train.rl import recorded

    calls = []

    def fake_update(**kwargs):
        calls.append(kwargs)
        make_state(Path(kwargs["out_state"]))
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


def test_checkpoints_prunes_the_previous_states_heavy_files_and_keeps_its_records(tmp_path, trainer):
    prev = make_state(tmp_path / "iter1" / "lemma" / "state", "full")
    update(tmp_path, config("checkpoints"), prev, tmp_path / "iter1" / "lift" / "state")
    assert "keep_states" not in trainer[0]["settings"]
    for name in HEAVY + FULL_HEAVY:
        assert not (prev / name).exists(), name
    assert not (prev / "sharded").exists()
    for name in RECORDS + [".snakemake_timestamp"]:
        assert (prev / name).is_file(), name
    marker = read_json(prev / "pruned.json")
    assert sorted(marker["removed"]) == sorted(
        ["optimizer.pt", "sharded"] + [n for n in HEAVY + FULL_HEAVY if n.startswith("policy/")]
    )
    assert marker["bytes"] == 100 * 6 and "keep_states: checkpoints" in marker["setting"]
    assert "iter1/lift/state" in marker["by"]
    # the new state is whole
    new = tmp_path / "iter1" / "lift" / "state"
    assert all((new / n).is_file() for n in HEAVY) and not (new / "pruned.json").exists()


def test_an_evaluated_checkpoint_keeps_its_policy_and_loses_its_optimizer_state(tmp_path, trainer):
    cfg = config("checkpoints")
    ck = make_state(tmp_path / "iter2" / "solver" / "state", "full")
    update(tmp_path, cfg, ck, tmp_path / "iter3" / "lemma" / "state", evaluated=[ck])
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


@pytest.mark.parametrize("keep", ["all", None])
def test_all_prunes_nothing(tmp_path, trainer, keep):
    cfg = config(keep)
    prev = make_state(tmp_path / "a")
    update(tmp_path, cfg, prev, tmp_path / "b")
    update(tmp_path, cfg, tmp_path / "b", tmp_path / "c")
    for state in ("a", "b"):
        assert (
            all((tmp_path / state / n).is_file() for n in HEAVY)
            and not (tmp_path / state / "pruned.json").exists()
        )
    assert keep is None or cfg["gasp"]["update"]["keep_states"] == "all"


def test_loading_a_pruned_state_fails_in_one_line_naming_the_setting(tmp_path, trainer):
    cfg = config("checkpoints")
    prev = make_state(tmp_path / "a")
    update(tmp_path, cfg, prev, tmp_path / "b")
    for load in (
        lambda: agents.state_policy("base", str(prev)),  # a phase job, or the benchmark layer
        lambda: update(tmp_path, cfg, prev, tmp_path / "again"),  # a rerun of the update
    ):
        with pytest.raises(UserError) as exc:
            load()
        text = str(exc.value)
        assert "\n" not in text and "gasp.update.keep_states" in text and "pruned" in text
        assert "--forcerun" in text and str(prev) in text


def test_a_skip_chain_prunes_the_state_it_leads_to_unless_it_passes_an_evaluated_checkpoint(
    tmp_path, trainer
):
    cfg = config("checkpoints")
    # iteration 2's solver update skipped: the checkpoint ck_..._i2 (evaluated) is the lift's state
    lift2 = make_state(tmp_path / "iter2" / "lift" / "state")
    solver2 = tmp_path / "iter2" / "solver" / "state"
    update(tmp_path, cfg, lift2, solver2, evaluated=[solver2], rows=0)
    assert read_json(solver2 / "skipped.json")["use_state"] == str(lift2)
    assert all((lift2 / n).is_file() for n in HEAVY)  # a skipped update prunes nothing
    lemma3 = tmp_path / "iter3" / "lemma" / "state"
    update(tmp_path, cfg, solver2, lemma3, evaluated=[solver2])
    # lift2 is the evaluated checkpoint's policy: kept, its optimizer state gone
    assert (lift2 / "policy" / "adapter_model.safetensors").is_file() and not (
        lift2 / "optimizer.pt"
    ).exists()
    assert read_json(lift2 / "pruned.json")["via_skipped"] == [str(solver2)]
    assert agents.state_policy("base", str(solver2)) == ("base", str(lift2 / "policy"))
    # the same chain through states nobody evaluates: the state it leads to goes
    lift3 = tmp_path / "iter3" / "lift" / "state"
    update(tmp_path, cfg, lemma3, lift3, evaluated=[solver2], rows=0)  # skipped: names lemma3
    update(tmp_path, cfg, lift3, tmp_path / "iter3" / "solver" / "state", evaluated=[solver2])
    assert (
        not (lemma3 / "optimizer.pt").exists()
        and not (lemma3 / "policy" / "adapter_model.safetensors").exists()
    )
    assert read_json(lemma3 / "pruned.json")["via_skipped"] == [str(lift3)]
    with pytest.raises(UserError, match="pruned"):
        agents.state_policy("base", str(lift3))


def test_a_bundle_replay_restores_a_pruned_state_without_its_marker(tmp_path, trainer):
    cfg = config("checkpoints")
    prev = make_state(tmp_path / "bundle" / "a")
    update(tmp_path, cfg, prev, tmp_path / "bundle" / "b")
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
