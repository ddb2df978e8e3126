"""What every track's agents share: generating into a recorded file, the adapter a
stage uses, and LoRA training from the base model (or restoring a bundle's record).

A track passes its own training settings (config ``<track>.training.<agent>``); the
files and records look the same for every track.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .. import layout
from ..errors import UserError
from ..records import read_json, read_jsonl, sha256_file, write_json, write_jsonl

log = logging.getLogger("selfplay")

TRAINING_RECORD = "training_record.json"


# --- models and adapters -----------------------------------------------------


def resolve_adapter(adapter_dir: str | None) -> str | None:
    """The adapter a later stage should use given a training output folder.

    A training step that had no examples writes only a record saying so, naming the
    adapter to keep using (the previous round's, or none = the base model).
    """
    if not adapter_dir:
        return None
    rec_path = Path(adapter_dir) / TRAINING_RECORD
    if not rec_path.is_file():
        raise UserError(f"{adapter_dir}: no {TRAINING_RECORD}; the training step did not finish")
    rec = read_json(rec_path)
    return str(adapter_dir) if rec.get("trained") else rec.get("use_adapter")


# The files that say what a policy state folder is (selfplay.layout): a state, a skipped
# update naming the state to keep using, or a state whose weights were pruned.
POLICY_STATE, SKIPPED_STATE, PRUNED_STATE = layout.POLICY_STATE, layout.SKIPPED_STATE, layout.PRUNED_STATE


def is_policy_state(folder: str | Path | None) -> bool:
    return folder is not None and (
        (Path(folder) / POLICY_STATE).is_file() or (Path(folder) / SKIPPED_STATE).is_file()
    )


def resolve_state(folder: str | Path | None, to_train: bool = False) -> Path | None:
    """The policy state a job should load for ``folder``: itself, or, when its update was
    skipped, the state its ``skipped.json`` names (None: the base model). ``to_train``: the
    job continues training from it, so it needs the optimizer state too (an evaluated
    checkpoint whose optimizer state was pruned still serves generation and evaluation)."""
    seen: set[str] = set()
    while folder is not None:
        folder = Path(folder)
        marker = folder / SKIPPED_STATE
        if not marker.is_file():
            if not (folder / POLICY_STATE).is_file():
                raise UserError(
                    f"{folder}: not a policy state (no {POLICY_STATE}); the update did not finish"
                )
            if (folder / PRUNED_STATE).is_file():
                pruned = read_json(folder / PRUNED_STATE)
                if to_train or not pruned.get("policy_kept"):
                    what = "optimizer state was" if pruned.get("policy_kept") else "weights were"
                    raise UserError(
                        f"{folder}: its {what} pruned under {pruned.get('setting')} "
                        f"({folder / PRUNED_STATE}); {pruned.get('advice')}"
                    )
            return folder
        if str(folder) in seen:
            raise UserError(f"{marker}: skipped states form a loop")
        seen.add(str(folder))
        folder = read_json(marker).get("use_state")
    return None


def state_policy(model_dir: str | None, state: str | Path | None) -> tuple[str | None, str | None]:
    """(model folder, adapter) for a policy state: the base model and the state's LoRA
    adapter, or the state's fully fine-tuned model and no adapter."""
    folder = resolve_state(state)
    if folder is None:
        return model_dir, None
    if read_json(folder / POLICY_STATE).get("finetune") == "full":
        return str(folder / "policy"), None
    return model_dir, str(folder / "policy")


def resolve_policy(model_dir: str | None, trained_dir: str | None) -> tuple[str | None, str | None]:
    """(model folder, adapter) a generation job loads for a training output folder: a
    LoRA adapter over the base model, or, when its training record says the whole model
    was fine-tuned (``finetune: full``), that model in place of the base and no adapter.
    The record decides, so a bundle's replay (records without weights) resolves alike.
    A policy state of the recorded updates resolves through :func:`state_policy`."""
    if is_policy_state(trained_dir):
        return state_policy(model_dir, trained_dir)
    adapter = resolve_adapter(trained_dir)
    if adapter is None:
        return model_dir, None
    record = read_json(Path(adapter) / TRAINING_RECORD) if (Path(adapter) / TRAINING_RECORD).is_file() else {}
    if record.get("trained") and record.get("finetune") == "full":
        return adapter, None
    return model_dir, adapter


def make_generation_backend(cfg: dict, model_dir: str | None):
    from ..llm.factory import generation_backend_config, make_backend

    return make_backend(generation_backend_config(cfg, model_dir))


def generate_to_file(cfg: dict, model_dir, requests, metas, out: str, what: str) -> None:
    """Generate every request and record prompts, settings and outputs in ``out``."""
    from ..llm.recording import generate_and_record

    if not requests:
        write_jsonl(out, [])
        log.info("%s: nothing to generate", what)
        return
    backend = make_generation_backend(cfg, model_dir)
    try:
        records = generate_and_record(
            backend, requests, out, meta=metas, chunk=cfg["generation"]["chunk_requests"]
        )
        stats = dict(getattr(backend, "stats", None) or {})
    finally:
        backend.close()
    log.info(
        "%s: %d requests, %d outputs -> %s", what, len(records), sum(len(r["outputs"]) for r in records), out
    )
    if "generated_tokens" in stats:  # the transformers backend counts what it ran
        log.info(
            "%s: %d tokens generated, %d prompt tokens prefilled, %.1f s generating",
            what,
            stats["generated_tokens"],
            stats.get("prefilled_tokens", 0),
            stats.get("seconds", 0.0),
        )


# --- Bob: the solver of the two equivalence games (SInQ, the Haskell track) -------


def verified_instances(candidates_path: str) -> dict[str, dict]:
    """The verified candidates of a stage, by id: the instances Bob is asked about."""
    return {c["id"]: c for c in read_jsonl(candidates_path) if c["verified"]}


def bob_generate_for(
    cfg: dict,
    stage: str,
    who: str,
    candidates_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
    bob_request,
    what: str,
) -> None:
    """Bob's recorded answers to every verified instance: ``bob_request(instance, stage,
    who, cfg, adapter)`` is the track's prompt; each answer's meta names its instance."""
    instances = list(verified_instances(candidates_path).values())
    adapter = resolve_adapter(adapter_dir)
    requests = [bob_request(inst, stage, who, cfg, adapter) for inst in instances]
    metas = [
        {"role": "bob", "who": who, "stage": stage, "instance_id": inst["id"], "adapter_dir": adapter}
        for inst in instances
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, what)


def answered_instance(instances: dict[str, dict], record: dict, bob_path: str, candidates_path: str) -> dict:
    """The instance a recorded Bob answer is about; UserError when it is not one of them."""
    inst = instances.get(record["meta"]["instance_id"])
    if inst is None:
        raise UserError(
            f"{bob_path}: Bob answered instance {record['meta']['instance_id']} "
            f"that is not a verified candidate in {candidates_path}"
        )
    return inst


def train_agent(
    cfg: dict,
    agent: str,
    trainset_path: str,
    model_dir: str,
    out_dir: str,
    seed_tag: str,
    previous_adapter_dir: str | None = None,
    track: str = "sinq",
    gpus: int = 0,
) -> dict:
    """LoRA SFT from the base model with config ``<track>.training.<agent>``; with no
    examples, record that and keep the previous model. ``gpus``: what the job asked its
    cluster for (resources.train.gpu): asked for and not visible stops the job."""
    from ..records import derive_seed
    from ..train.sft import TrainingSkipped, train_lora_sft

    rows = read_jsonl(trainset_path)
    train_examples = [{"prompt": r["prompt"], "completion": r["completion"]} for r in rows]
    settings = dict(cfg[track]["training"][agent])
    seed = (
        derive_seed(cfg["seed"], "train", agent, seed_tag)
        if track == "sinq"
        else derive_seed(cfg["seed"], "train", track, agent, seed_tag)
    )
    try:
        record = train_lora_sft(str(model_dir), train_examples, str(out_dir), settings, seed, gpus=gpus)
        record["trained"] = True
    except TrainingSkipped as exc:
        previous = resolve_adapter(previous_adapter_dir)
        record = {
            "trained": False,
            "reason": str(exc),
            "n_examples": len(train_examples),
            "use_adapter": previous,
            "agent": agent,
            "base_model": str(model_dir),
        }
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        log.warning("%s %s: no training examples; keeping %s", agent, seed_tag, previous or "the base model")
    record["trainset"] = str(trainset_path)
    record["trainset_sha256"] = sha256_file(trainset_path)  # lets a restore check it got the same set
    write_json(Path(out_dir) / TRAINING_RECORD, record)
    return record


def restore_agent_training(
    cfg: dict, agent: str, trainset_path: str, bundled_record: str, out_dir: str, seed_tag: str
) -> dict:
    """The training step when config ``replay_training_from`` is set: no model, no training.

    The bundled ``training_record.json`` (and the adapter weights beside it, when the
    bundle has them) is put in place of the training output, marked as restored, after
    checking that the training set re-derived here is the one it was trained on.
    """
    from ..bundle.restore import restore_training_output

    record = restore_training_output(bundled_record, out_dir, trainset_path, cfg["backend"]["name"])
    info = record["restored_from_bundle"]
    log.info(
        "%s %s: restored training record from %s (trained=%s, adapter weights %s)",
        agent,
        seed_tag,
        bundled_record,
        record.get("trained"),
        "restored" if info["adapter_weights"] else "not in the bundle",
    )
    return record
