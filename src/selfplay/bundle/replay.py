"""``selfplay bundle replay``: re-derive a bundle's tables without a model and compare them.

Steps: unpack (or use an unpacked folder), check every file against the manifest,
write a working directory with the bundle's input data and a config that replays the
bundled recordings and restores the bundled training records, run Snakemake on the
project's Snakefile there, and compare what it re-derived with what the bundle holds:

- tables (every CSV/Markdown table and figure2.csv): byte for byte, the verdict;
- training sets: byte for byte (a difference means the replay diverged upstream);
- verdict files: the decisions in them (verified / reason / difficulty / Bob's
  correct answers), since they also hold execution times that never repeat exactly.

Any difference makes the exit status 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import UserError
from ..records import read_json, read_jsonl, sha256_file
from . import META_NAME, snakemake_command
from .manifest import MANIFEST_NAME, BundleCheckError, check_manifest

NO_MODEL = "model-not-available-in-replay"


# --------------------------------------------------------------------------- opening a bundle


def unpack(bundle: str | os.PathLike, into: Path) -> Path:
    """The bundle's root folder: ``bundle`` itself if it is an unpacked one, else its tar unpacked into ``into``."""
    path = Path(bundle)
    if path.is_dir():
        if (path / MANIFEST_NAME).is_file():
            return path.resolve()
        inner = [p for p in path.iterdir() if (p / MANIFEST_NAME).is_file()]
        if len(inner) == 1:
            return inner[0].resolve()
        raise BundleCheckError(f"{path}: no {MANIFEST_NAME} in it (or in one folder below); not a bundle")
    if not path.is_file():
        raise UserError(f"{path}: no such bundle")
    mode = "r:gz" if path.name.endswith((".tar.gz", ".tgz")) else "r:*"
    try:
        with tarfile.open(path, mode) as tar:
            tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            if len(tops) != 1:
                raise BundleCheckError(f"{path}: a bundle holds one top folder, this has {len(tops)}")
            into.mkdir(parents=True, exist_ok=True)
            tar.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise BundleCheckError(
            f"{path}: cannot unpack ({reason:.200}); the file is damaged or not a tar.gz"
        ) from exc
    return (into / tops.pop()).resolve()


def read_meta(root: Path) -> dict:
    path = root / META_NAME
    if not path.is_file():
        raise BundleCheckError(f"{root}: no {META_NAME}; not a selfplay bundle")
    return read_json(path)


def bundled_tracks(meta: dict) -> list[str]:
    """The tracks a bundle holds (format 1 bundles made before the Haskell track held SInQ only)."""
    return list(meta.get("tracks") or [meta.get("track", "sinq")])


def project_snakefile() -> Path:
    """The Snakefile of the project this package runs from (src/selfplay -> the repository root)."""
    import selfplay

    candidate = Path(selfplay.__file__).resolve().parents[2] / "Snakefile"
    if not candidate.is_file():
        raise UserError(
            "cannot find the project's Snakefile next to the installed selfplay package; "
            "pass --snakefile (the bundle's own copy is workflow/Snakefile)"
        )
    return candidate


# --------------------------------------------------------------------------- the replay run


def replay_config(root: Path, meta: dict, workdir: Path, retrain: bool, model: str | None) -> dict:
    """The bundled config, made to replay: recordings as the backend, training restored, no model."""
    cfg = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
    recordings = [str(root / rel) for rel in meta["recordings"]]
    cfg["backend"] = {"name": "replay", "files": recordings, "on_missing": "error"}
    cfg["tracks"] = bundled_tracks(meta)  # rule all builds just the bundled tracks
    if retrain:
        cfg.pop("replay_training_from", None)
        if model:
            cfg["model"] = {
                "name": cfg["model"]["name"],
                "source": "local",
                "path": str(Path(model).resolve()),
            }
    else:
        cfg["replay_training_from"] = str(root)
        # Nothing may load a model: point it at a folder that does not exist.
        cfg["model"] = {"name": cfg["model"]["name"], "source": "local", "path": str(workdir / NO_MODEL)}
    return cfg


def prepare_workdir(root: Path, workdir: Path, cfg: dict) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    resources = root / "resources"
    if resources.is_dir():
        shutil.copytree(resources, workdir / "resources", dirs_exist_ok=True)
    (workdir / "config.yaml").write_text(
        "# Written by `selfplay bundle replay`: the bundle's config, replaying its recordings.\n"
        + yaml.safe_dump(cfg, sort_keys=False),
        encoding="utf-8",
    )


def run_snakemake(snakefile: Path, workdir: Path, cores: str, log_path: Path, retrain: bool) -> None:
    cmd = snakemake_command(
        snakefile, workdir, "--configfile", str(workdir / "config.yaml"), "--cores", str(cores)
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if not retrain:
        env["CUDA_VISIBLE_DEVICES"] = ""  # nothing downstream of generation needs a GPU
    with open(log_path, "w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(workdir))
    if proc.returncode != 0:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        errors = [line.strip() for line in lines if "error" in line.lower()]
        hint = errors[-1] if errors else (lines[-1].strip() if lines else "no output")
        raise UserError(
            f"the replay run failed (snakemake exit {proc.returncode}): {hint:.300}; full log: {log_path}"
        )


# --------------------------------------------------------------------------- comparing


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {i}: bundle {x[:80]!r} vs replay {y[:80]!r}"
    if len(la) != len(lb):
        return f"bundle has {len(la)} lines, replay {len(lb)}"
    return "same lines, different line endings"


# What a verdict record decided (whichever of these it has), as opposed to how long it took.
DECISION_KEYS = (
    "id",
    "verified",
    "reject_reason",
    "difficulty",  # candidates, labels (both tracks)
    "problem",
    "sample",
    "passed",
    "compile_error",
    "reason",  # scored code generation (Table 3)
    "kept",
)  # EvolveCoder round datasets (its pass matrices compare by "passed")


def _decisions(path: Path) -> list:
    """The decisions in a verdict file (candidates, labels, checks, proof checks, scored
    samples), without execution times."""
    out = []
    for rec in read_jsonl(path):
        bob = rec.get("bob") or {}
        verdict = rec.get("verdict") if isinstance(rec.get("verdict"), dict) else {}
        out.append(
            [rec.get(k) for k in DECISION_KEYS]
            + [
                bob.get("n_correct"),
                [s.get("correct") for s in bob.get("samples", [])],
                verdict.get("status"),
                verdict.get("accepted"),
            ]
        )
    return out


@dataclass
class Comparison:
    tables: list[tuple[str, str | None]] = field(default_factory=list)  # (path, None or the difference)
    trainsets: list[tuple[str, str | None]] = field(default_factory=list)
    verdicts: list[tuple[str, str | None]] = field(default_factory=list)
    adapters: list[tuple[str, str]] = field(default_factory=list)  # retrain: (record, note)

    @property
    def ok(self) -> bool:
        return all(d is None for group in (self.tables, self.trainsets, self.verdicts) for _, d in group)


def _compare_bytes(root: Path, workdir: Path, rel: str) -> str | None:
    ours = workdir / rel
    if not ours.is_file():
        return "not re-derived"
    a, b = (root / rel).read_bytes(), ours.read_bytes()
    return None if a == b else first_difference(a, b)


def _normalized_json(path: Path):
    """A JSON file with every list sorted: PEFT writes target_modules from a set, in no fixed order."""

    def norm(value):
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return sorted((norm(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return value

    return norm(json.loads(path.read_text(encoding="utf-8")))


def retrained_adapter_note(root: Path, workdir: Path, record_rel: str, manifest: dict | None) -> str:
    """How a retrained adapter compares with the bundled one, file by file (informational).

    ``adapter_sha256`` is a hash over the whole folder, and adapter_config.json lists
    target_modules in set order, which changes between processes; so the weights are
    compared by the sha256 the manifest recorded (even for weights left out of the
    bundle) and JSON files by content with lists sorted.
    """
    folder = Path(record_rel).parent.as_posix()
    ours = workdir / folder
    if not (ours / "training_record.json").is_file():
        return "not retrained"
    if read_json(ours / "training_record.json").get("adapter_sha256") == read_json(root / record_rel).get(
        "adapter_sha256"
    ):
        return "same adapter_sha256"
    entries = (manifest or {}).get("files", []) + (manifest or {}).get("not_included", [])
    bundled = {
        e["path"].rsplit("/", 1)[1]: e
        for e in entries
        if e["path"].startswith(folder + "/") and "/" not in e["path"][len(folder) + 1 :]
    }
    different = []
    for name, entry in sorted(bundled.items()):
        if name in ("training_record.json", "README.md"):
            continue
        mine = ours / name
        if not mine.is_file():
            different.append(f"{name} missing")
        elif sha256_file(mine) == entry["sha256"]:
            continue
        elif (
            name.endswith(".json")
            and (root / entry["path"]).is_file()
            and _normalized_json(mine) == _normalized_json(root / entry["path"])
        ):
            continue
        else:
            different.append(name)
    if not bundled:
        return "adapter_sha256 differs (no file checksums in the manifest to compare)"
    if different:
        return (
            "differs: "
            + ", ".join(different)
            + " (bit-identical training needs the same hardware and library versions)"
        )
    return "same weights (adapter_sha256 differs only by the order of target_modules in adapter_config.json)"


def compare(root: Path, workdir: Path, meta: dict, retrain: bool, manifest: dict | None = None) -> Comparison:
    result = Comparison()
    for rel in meta["tables"]:
        result.tables.append((rel, _compare_bytes(root, workdir, rel)))
    for rel in meta.get("trainsets", []):
        result.trainsets.append((rel, _compare_bytes(root, workdir, rel)))
    for rel in meta.get("verdicts", []):
        ours = workdir / rel
        if not ours.is_file():
            result.verdicts.append((rel, "not re-derived"))
        else:
            same = _decisions(root / rel) == _decisions(ours)
            result.verdicts.append((rel, None if same else "different decisions"))
    if retrain:
        for rel in meta.get("training_records", []):
            result.adapters.append((rel, retrained_adapter_note(root, workdir, rel, manifest)))
    return result


def report_lines(result: Comparison) -> list[str]:
    lines = []
    for rel, diff in result.tables:
        lines.append(f"  table    {rel}: {'identical' if diff is None else 'DIFFERS, ' + diff}")
    bad_sets = [(r, d) for r, d in result.trainsets if d is not None]
    lines.append(
        f"  training sets: {len(result.trainsets) - len(bad_sets)}/{len(result.trainsets)} identical"
    )
    lines += [f"    DIFFERS {r}: {d}" for r, d in bad_sets]
    bad_verdicts = [(r, d) for r, d in result.verdicts if d is not None]
    lines.append(
        f"  verdict files: {len(result.verdicts) - len(bad_verdicts)}/{len(result.verdicts)} "
        "with the same decisions"
    )
    lines += [f"    DIFFERS {r}: {d}" for r, d in bad_verdicts]
    lines += [f"  retrained {rel}: {note}" for rel, note in result.adapters]
    n_bad = sum(d is not None for _, d in result.tables)
    if result.ok:
        lines.append(f"REPRODUCED: all {len(result.tables)} tables are byte-identical to the bundle's")
    elif n_bad:
        lines.append(f"NOT REPRODUCED: {n_bad} of {len(result.tables)} tables differ from the bundle's")
    else:
        lines.append("NOT REPRODUCED: the tables match but intermediate results differ (see above)")
    return lines


# --------------------------------------------------------------------------- the command


def replay_bundle(
    bundle: str,
    out: str,
    cores: str = "all",
    retrain: bool = False,
    model: str | None = None,
    snakefile: str | None = None,
    echo=print,
) -> int:
    out_dir = Path(out).resolve()
    if out_dir.exists() and any(out_dir.iterdir()):
        raise UserError(f"{out_dir}: not empty; give a new or empty folder for --out")
    if model and not retrain:
        raise UserError("--model is for --retrain; a replay loads no model")
    snake = Path(snakefile).resolve() if snakefile else project_snakefile()
    if not snake.is_file():
        raise UserError(f"{snake}: no such Snakefile")
    out_dir.mkdir(parents=True, exist_ok=True)
    root = unpack(bundle, out_dir / "bundle")
    manifest = check_manifest(root)
    meta = read_meta(root)
    echo(
        f"bundle {root.name}: {len(manifest['files'])} files match the manifest "
        f"({len(meta['recordings'])} recordings, {len(meta['tables'])} tables)"
    )
    workdir = out_dir / "work"
    cfg = replay_config(root, meta, workdir, retrain, model)
    prepare_workdir(root, workdir, cfg)
    log_path = out_dir / "snakemake.log"
    echo(
        f"re-running downstream of generation in {workdir} "
        f"({'retraining' if retrain else 'training restored from the bundle, no model'}); log: {log_path}"
    )
    run_snakemake(snake, workdir, cores, log_path, retrain)
    result = compare(root, workdir, meta, retrain, manifest)
    for line in report_lines(result):
        echo(line)
    (out_dir / "comparison.json").write_text(
        json.dumps(
            {
                "ok": result.ok,
                "tables": result.tables,
                "trainsets": result.trainsets,
                "verdicts": result.verdicts,
                "retrained_adapters": result.adapters,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0 if result.ok else 1


def verify_bundle(bundle: str, scratch: Path, echo=print) -> int:
    root = unpack(bundle, scratch)
    manifest = check_manifest(root)
    left_out = len(manifest.get("not_included", []))
    echo(
        f"ok: all {len(manifest['files'])} files of bundle {root.name} match its manifest"
        + (f" ({left_out} listed files were left out by design)" if left_out else "")
    )
    return 0
