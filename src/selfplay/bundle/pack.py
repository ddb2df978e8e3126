"""Build a reproduction bundle (rule ``bundle``; see docs/bundle.md).

The bundle is assembled in a staging folder beside the output, checksummed into
MANIFEST.json, and written as one gzip'd tar whose entries are sorted and carry one
fixed owner and time, so two bundles of the same files differ only where the files do.
Two parts come from Snakemake itself, each run as a separate ``python -m snakemake``
process on the same workflow:

- ``report.html``: ``snakemake --report`` on the run's working directory and config.
  Report creation builds the DAG but takes no lock, so it can run while the Snakemake
  process that runs this job waits for it.
- ``workflow/``: ``snakemake --archive`` in the workflow's own folder, which packs the
  Snakefile, rules, scripts and every git-tracked file. Only when that folder is a git
  work tree; the package source and the files listed in ``SOURCE_PATHS`` are added in
  any case, so files not committed yet are never missed.
"""

from __future__ import annotations

import gzip
import logging
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

from ..errors import UserError
from ..records import write_json, write_text_atomic
from . import BUNDLE_FORMAT, META_NAME, snakemake_command
from .manifest import build_manifest, file_entry, write_manifest
from .restore import WEIGHT_SUFFIXES

log = logging.getLogger("selfplay")

RECORD_NAME = "training_record.json"

# Kind of each part the rule hands over (rules/bundle.smk), as written in the manifest.
PART_KINDS = {
    "data": "input-data",
    "recordings": "recording",
    "verdicts": "verdict",
    "trainsets": "trainset",
    "tables": "table",
    "figures": "figure",
}


def merge_parts(
    track_parts: list[dict[str, list[str]]], shared: dict[str, list[str]]
) -> dict[str, list[str]]:
    """The files the bundle rule hands over, by part: each track's (rules/<track>.smk) in the
    order of the tracks, then the shared benchmark layer's own check's, less what is there."""
    parts: dict[str, list[str]] = {}
    for track in track_parts:
        for part, files in track.items():
            parts.setdefault(part, []).extend(files)
    for part, files in shared.items():
        have = parts.setdefault(part, [])
        have.extend(f for f in files if f not in have)
    return parts


# Workflow files added to workflow/ whether or not git and `snakemake --archive` saw them.
SOURCE_PATHS = (
    "Snakefile",
    "config.yaml",
    "pyproject.toml",
    "requirements.txt",
    "requirements-test.txt",
    "Makefile",
    "README.md",
    "rules",
    "workflow_scripts",
    "src",
    "config",
    "profiles",
    "containers",
    "scripts",
    "docs",
)
_SKIP_PARTS = {"__pycache__", ".snakemake", ".pytest_cache", ".git"}
_SKIP_SUFFIXES = (".pyc", ".egg-info")
INPUT_DIRS = ("resources/data", "resources/downloads")


def _skip(path: Path) -> bool:
    """Caches and Snakemake's bookkeeping (e.g. the .snakemake_timestamp in directory outputs)."""
    return any(
        part in _SKIP_PARTS or part.endswith(_SKIP_SUFFIXES) or part.startswith(".snakemake")
        for part in path.parts
    )


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def _walk_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and not _skip(p.relative_to(root)))


def _run(
    cmd: list[str], what: str, cwd: str | None = None, timeout: int = 900
) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    log.info("%s: %s", what, " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    for line in (proc.stdout + proc.stderr).splitlines()[-40:]:
        log.info("  | %s", line)
    return proc


# --------------------------------------------------------------------------- environment


def pip_freeze() -> str:
    """``pip freeze --all`` of the running interpreter; importlib.metadata when pip is absent."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, timeout=300
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib import metadata

    dists = {(d.metadata["Name"] or "?"): d.version for d in metadata.distributions()}
    return "".join(
        f"{name}=={version}\n" for name, version in sorted(dists.items(), key=lambda kv: kv[0].lower())
    )


def python_facts() -> dict:
    import snakemake

    from .. import __version__

    return {
        "python": sys.version,
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "snakemake": snakemake.__version__,
        "selfplay": __version__,
    }


def git_facts(repo: Path) -> dict:
    """Commit and uncommitted paths of the workflow's folder, or nulls when it is not a git work tree."""

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"git_commit": None, "git_dirty": None}
        status = git("status", "--porcelain")
        dirty = [line[3:] for line in status.stdout.splitlines() if line.strip()]
        return {"git_commit": head.stdout.strip(), "git_dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None, "git_dirty": None}


def add_containers(repo: Path, dest: Path, overrides: dict | None = None) -> list[str]:
    """Container definitions and what they copy in (everything under containers/), and
    images.json: the image references this run's rules named (config overrides applied)."""
    from ..containers.registry import load_images

    folder = repo / "containers"
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.iterdir() if p.is_file())
    for src in found:
        _copy(src, dest / src.name)
    names = [p.name for p in found]
    if (folder / "images.yaml").is_file():
        images = load_images(repo, overrides)
        write_json(
            dest / "images.json",
            {
                name: {
                    "ref": i.ref,
                    "version": i.version,
                    "definition": i.definition,
                    "published_ref": i.published_ref,
                }
                for name, i in images.items()
            },
        )
        names.append("images.json")
    return names


# --------------------------------------------------------------------------- Snakemake's own tools


def snakemake_report(snakefile: str, workdir: str, configfile: Path, dest: Path, tracks: list[str]) -> None:
    """``snakemake --report`` for the run: same Snakefile, working directory and config,
    over the bundled tracks' tables and figures (a track the run did not build is left out)."""
    with tempfile.TemporaryDirectory(prefix="selfplay-report-") as tmp:
        html = Path(tmp) / "report.html"
        proc = _run(
            snakemake_command(
                snakefile,
                Path(workdir).resolve(),
                "--configfile",
                str(configfile),
                "--config",
                f"tracks=[{','.join(tracks)}]",
                "--report",
                str(html),
            ),
            "snakemake --report",
        )
        if proc.returncode != 0 or not html.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise UserError(
                f"snakemake --report failed (exit {proc.returncode}): {tail[0]}; "
                "set bundle.report: false to bundle without the report"
            )
        _copy(html, dest)


def snakemake_archive(snakefile: str, repo: Path, dest: Path) -> bool:
    """Unpack ``snakemake --archive`` of the workflow folder into ``dest``; False if it could not run."""
    with tempfile.TemporaryDirectory(prefix="selfplay-archive-") as tmp:
        tar_path = Path(tmp) / "workflow.tar.gz"
        proc = _run(
            snakemake_command(snakefile, repo, "--archive", str(tar_path)),
            "snakemake --archive",
            cwd=str(repo),
        )
        if proc.returncode != 0 or not tar_path.is_file():
            log.warning(
                "snakemake --archive did not run (exit %s); workflow/ holds the listed source files only",
                proc.returncode,
            )
            return False
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tar_path, "r:gz") as tar:
            tar.extractall(dest, filter="data")
    return True


def add_workflow_source(snakefile: str, repo: Path, dest: Path) -> dict:
    facts = git_facts(repo)
    archived = facts["git_commit"] is not None and snakemake_archive(snakefile, repo, dest)
    for name in SOURCE_PATHS:
        src = repo / name
        if not src.exists():
            continue
        for f in _walk_files(src):
            target = dest / f.relative_to(repo)
            if not target.exists():
                _copy(f, target)
    for junk in [p for p in dest.rglob("*") if p.is_dir() and _skip(p.relative_to(dest))]:
        shutil.rmtree(junk, ignore_errors=True)
    method = "snakemake --archive + listed source paths" if archived else "listed source paths"
    return {"method": method, **facts}


# --------------------------------------------------------------------------- the tarball


def write_tar_gz(staging: Path, top: str, out: Path, mtime: int) -> None:
    """Write ``staging`` as ``top/...`` into ``out`` (atomically), entries sorted, owner and time fixed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime, compresslevel=6) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            paths = [staging] + sorted(staging.rglob("*"), key=lambda p: p.relative_to(staging).as_posix())
            for path in paths:
                rel = path.relative_to(staging).as_posix()
                arcname = top if rel == "." else f"{top}/{rel}"
                info = tar.gettarinfo(str(path), arcname=arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = mtime
                if info.isdir():
                    info.mode = 0o755
                    tar.addfile(info)
                elif info.isfile():
                    info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
                    with open(path, "rb") as fh:
                        tar.addfile(info, fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------- the bundle


def make_bundle(
    out_path: str,
    name: str,
    config: dict,
    parts: dict[str, list[str]],
    adapters: list[str],
    log_dirs: list[str],
    include_adapters: bool,
    with_report: bool,
    snakefile: str,
    workdir: str = ".",
    tracks: list[str] | None = None,
) -> dict:
    """Assemble the bundle for the run in ``workdir``; return its bundle.json.

    ``parts`` maps a part name (PART_KINDS) to the run's files of that kind, as paths
    relative to ``workdir``; ``adapters`` are the training output folders; ``tracks``
    the tracks whose files ``parts`` holds (default: SInQ alone).
    """
    tracks = list(tracks or ["sinq"])
    work = Path(workdir)
    repo = Path(snakefile).resolve().parent
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    parent = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=out.parent))
    root = parent / name
    try:
        root.mkdir()
        kinds: dict[str, str] = {}

        def put(rel: str, kind: str) -> None:
            _copy(work / rel, root / rel)
            kinds[rel] = kind

        for part, kind in PART_KINDS.items():
            for rel in parts.get(part, []):
                put(str(rel), kind)
        for folder in INPUT_DIRS:  # every input dataset, not only the ones this config reads
            if (work / folder).is_dir():
                for f in _walk_files(work / folder):
                    rel = f.relative_to(work).as_posix()
                    if rel not in kinds:
                        put(rel, "input-data")

        not_included = []
        training_records = []
        for adapter in adapters:
            adapter = Path(adapter)
            record = adapter / RECORD_NAME
            put(record.as_posix(), "training-record")
            training_records.append(record.as_posix())
            for f in _walk_files(work / adapter):
                rel = f.relative_to(work).as_posix()
                if rel in kinds:
                    continue
                if not rel.endswith(WEIGHT_SUFFIXES):
                    put(rel, "adapter-config")  # adapter_config.json, the model card: small, always kept
                elif include_adapters:
                    put(rel, "adapter")
                else:
                    not_included.append(file_entry(work, rel, "adapter"))

        for folder in log_dirs:
            kind = "benchmark" if Path(folder).parts[0] == "benchmarks" else "log"
            if (work / folder).is_dir():
                for f in _walk_files(work / folder):
                    put(f.relative_to(work).as_posix(), kind)

        config_path = root / "config.yaml"
        write_text_atomic(
            config_path,
            "# The configuration this run used (all config files and --config merged).\n"
            + yaml.safe_dump(config, sort_keys=False),
        )
        env_dir = root / "environment"
        facts = python_facts()
        write_json(env_dir / "python.json", facts)
        write_text_atomic(env_dir / "pip-freeze.txt", pip_freeze())
        containers = add_containers(repo, env_dir / "containers", config.get("containers"))
        source = add_workflow_source(snakefile, repo, root / "workflow")
        if with_report:
            snakemake_report(snakefile, str(work), config_path, root / "report.html", tracks)

        meta = {
            "format": BUNDLE_FORMAT,
            "name": name,
            "created": datetime.now(UTC).replace(microsecond=0).isoformat(),
            "tracks": tracks,
            "experiments": {track: config[track]["experiment"] for track in tracks},
            "tables": list(parts.get("tables", [])),
            "figures": list(parts.get("figures", [])),
            "recordings": list(parts.get("recordings", [])),
            "verdicts": list(parts.get("verdicts", [])),
            "trainsets": list(parts.get("trainsets", [])),
            "training_records": training_records,
            "adapters_included": bool(include_adapters),
            "report": "report.html" if with_report else None,
            "containers": containers,
            "workflow_source": source,
            "environment": facts,
        }
        write_json(root / META_NAME, meta)
        write_text_atomic(root / "README.md", bundle_readme(meta))

        for rel in [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]:
            if rel not in kinds:
                first = rel.split("/", 1)[0]
                kinds[rel] = {
                    "workflow": "workflow-source",
                    "environment": "environment",
                    "config.yaml": "config",
                    "report.html": "report",
                }.get(first, "metadata")
        manifest = build_manifest(root, kinds, not_included)
        write_manifest(root, manifest)
        write_tar_gz(root, name, out, int(started))
        total = sum(e["size"] for e in manifest["files"])
        log.info(
            "bundle %s: %d files (%.1f MB unpacked, %d left out), %.1f MB packed, %.1f s",
            out,
            len(manifest["files"]),
            total / 1e6,
            len(not_included),
            out.stat().st_size / 1e6,
            time.time() - started,
        )
        return meta
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def bundle_readme(meta: dict) -> str:
    name = meta["name"]
    runs = ", ".join(f"track `{t}` (experiment `{e}`)" for t, e in meta["experiments"].items())
    tables = "\n".join(f"    {t}" for t in meta["tables"])
    adapters = (
        "The adapter weights are included next to their records."
        if meta["adapters_included"]
        else "The adapter weights are not included (bundle.include_adapters was false); their files and "
        "sha256 are listed under `not_included` in MANIFEST.json and `adapter_sha256` in each record."
    )
    commit = meta["workflow_source"].get("git_commit") or "unknown (not a git work tree)"
    dirty = meta["workflow_source"].get("git_dirty")
    dirty_note = f" with {len(dirty)} uncommitted change(s) (the copy in workflow/ has them)" if dirty else ""
    return f"""# Reproduction bundle `{name}`

Made {meta["created"]} by `snakemake bundle` from {runs}, workflow commit
{commit}{dirty_note}.

## What is here

| path | what |
|---|---|
| `config.yaml` | the configuration the run used (every config file and `--config` merged) |
| `environment/` | `python.json` (interpreter, platform, Snakemake and selfplay versions), `pip-freeze.txt` (exact package versions), `containers/` (container definitions and image references, when the project had them) |
| `workflow/` | the workflow source: Snakefile, rules, scripts and the `selfplay` package |
| `resources/` | the input datasets, at the paths the workflow reads them from |
| `results/<track>/<experiment>/<stage>/alice/`, `bob_*/` (and for the Haskell track `proof_gen*/`, `translate/generations.jsonl`, `codegen/<bench>/<agent>.jsonl`) | every recorded generation (prompt, sampling, outputs, adapter hash) |
| `results/<track>/<experiment>/<stage>/candidates/`, `labeled_*/` (and `checked/`, `proof_check*/`, `codegen/*.scored.jsonl`) | the verdicts: verification, proof checks, Bob's scoring, scored code |
| `results/<track>/<experiment>/**/train_*.jsonl` | the training sets |
| `results/<track>/<experiment>/**/training_record.json` | what each training step did, with `adapter_sha256` |
| `results/tables/`, `results/figures/` | the papers' tables and figures |
| `report.html` | Snakemake's HTML report of the run (when made) |
| `logs/`, `benchmarks/` | per-job logs and time/memory |
| `MANIFEST.json`, `SHA256SUMS` | size and sha256 of every file; `sha256sum -c SHA256SUMS` checks them without selfplay |

{adapters}

## Re-deriving everything from it

No GPU and no model are needed. With the selfplay project installed (`make install`,
or the versions in `environment/pip-freeze.txt`):

    selfplay bundle verify {name}.tar.gz                 # every file against the manifest
    selfplay bundle replay {name}.tar.gz --out DIR       # re-run and compare the tables

`replay` checks the manifest, writes `DIR/work/config.yaml` (this config with
`backend: {{name: replay, files: [the recordings here], on_missing: error}}`,
`replay_training_from:` this folder, and a model path that does not exist), copies
`resources/` into `DIR/work`, runs Snakemake on the project's Snakefile there, and
compares these tables byte for byte with the ones it re-derived:

{tables}

Every step after generation runs again for real: sandboxed verification (Python
runs, GHC compile-and-run checks, proof checks), Bob's scoring, difficulty labels,
training-set selection, code-generation scoring, the tables and the figures.
Generation is answered from the recordings, and each training step restores its
bundled `training_record.json` (marked `restored_from_bundle`) after checking that
the training set it re-derived has the recorded sha256. With the model at hand,
`--retrain --model PATH` trains the adapters again instead (the tables do not
depend on it: Bob's answers still come from the recordings).

By hand, the same: unpack, copy `resources/` into an empty folder, write the
config above there as `config.yaml`, run
`snakemake --snakefile <project>/Snakefile --directory <folder> --cores all`,
and `cmp` each table. `workflow/` holds the exact source that made this bundle.
"""
