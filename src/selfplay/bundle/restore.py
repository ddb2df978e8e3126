"""Restore a training step from a bundle instead of training (config ``replay_training_from``).

The training output folder gets the bundled ``training_record.json`` with one key
added, ``restored_from_bundle``; ``adapter_sha256`` and everything else are kept as
they were. When the bundle holds the adapter weights beside the record they are
copied too, and their tree hash must equal the record's ``adapter_sha256``.

Before anything is written, the training set that this run re-derived is checked
against the one the bundled adapter was trained on (``trainset_sha256`` in the
record; records written before that key existed are checked by example count), so a
restore can never pair an adapter with data it was not trained on.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..errors import UserError
from ..records import read_json, read_jsonl, sha256_file, sha256_tree, write_json

RECORD_NAME = "training_record.json"
RESTORED_KEY = "restored_from_bundle"
# Files of an adapter or state folder that hold weights; `bundle.include_adapters` decides
# whether they are packed. ".distcp": a torch.distributed.checkpoint shard (an FSDP state's
# sharded/ folder: weights and AdamW moments, one file per process).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".distcp")


def _check_trainset(record: dict, record_path: Path, trainset_path: str) -> str:
    digest = sha256_file(trainset_path)
    expected = record.get("trainset_sha256")
    if expected is not None:
        if expected != digest:
            raise UserError(
                f"{trainset_path}: the training set derived here differs from the one the bundled "
                f"record {record_path} was trained on (sha256 {digest[:12]} vs {expected[:12]}); "
                "the replay diverged upstream of training"
            )
    else:
        n_rows = len(read_jsonl(trainset_path))
        if record.get("n_examples") is not None and record["n_examples"] != n_rows:
            raise UserError(
                f"{trainset_path}: {n_rows} examples here, but the bundled record {record_path} "
                f"was trained on {record['n_examples']}; the replay diverged upstream of training"
            )
    return digest


def restore_training_output(bundled_record: str, out_dir: str, trainset_path: str, backend_name: str) -> dict:
    """Put the bundled record (and adapter weights, if bundled) at ``out_dir``; return the written record."""
    record_path = Path(bundled_record)
    if not record_path.is_file():
        raise UserError(f"{record_path}: no bundled training record to restore")
    record = read_json(record_path)
    if not isinstance(record, dict) or "trained" not in record:
        raise UserError(f"{record_path}: not a training record (no 'trained' key)")
    trainset_digest = _check_trainset(record, record_path, trainset_path)

    # Everything beside the record that training wrote (not Snakemake's .snakemake_timestamp); a
    # bundle without the weights still has the small adapter_config.json, which alone is no adapter.
    weights = sorted(
        p
        for p in record_path.parent.iterdir()
        if p.is_file() and p.name != RECORD_NAME and not p.name.startswith(".snakemake")
    )
    if not any(p.name.endswith(WEIGHT_SUFFIXES) for p in weights):
        weights = []
    if record["trained"] and not weights and backend_name != "replay":
        raise UserError(
            f"{record_path.parent}: the bundle has this adapter's record but not its weights, and "
            f"backend {backend_name!r} would generate with it; use backend 'replay', or a bundle made "
            "with bundle.include_adapters: true, or retrain"
        )

    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.restore-", dir=out.parent))
    try:
        for src in weights:
            shutil.copy2(src, staging / src.name)
        if weights and record.get("adapter_sha256") and sha256_tree(staging) != record["adapter_sha256"]:
            raise UserError(
                f"{record_path.parent}: the bundled adapter weights do not hash to the record's "
                "adapter_sha256"
            )
        record[RESTORED_KEY] = {
            "record": str(record_path),
            "record_sha256": sha256_file(record_path),
            "adapter_weights": bool(weights),
            "trainset_sha256": trainset_digest,
        }
        write_json(staging / RECORD_NAME, record)
        staging.chmod(0o755)  # mkdtemp makes it private; the real training output is not
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return record
