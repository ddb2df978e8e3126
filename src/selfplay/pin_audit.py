"""Which downloads of a config are not pinned by commit and by checksum (issue 19).

A paper config should ship every hub model and every downloaded data file pinned twice:
by a commit (config, or a module's constant) and by the sha256 of each file (config, an
adapter's spec, or a lock file a first download wrote: ``config/model-pins.tsv`` for model
folders, ``config/download-pins.tsv`` for data files, ``config/revision-pins.tsv`` for the
commit a branch resolved to). ``audit`` lists, for one loaded config, each download with
where its commit and its checksums come from; ``unpinned`` keeps the ones that lack
either, as one line each, for the closing note of a run and for a test that names them.

Nothing here touches the network: it reads the config, the modules' pinned constants
and the lock files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .evaluate import pins
from .llm import model_prep


@dataclass(frozen=True)
class Pin:
    """One download of a config: a hub model folder or a data file."""

    kind: str  # "model" or "dataset"
    where: str  # the config key that asks for it
    repo: str
    revision: str | None  # as config (or the module) names it
    commit: str | None  # the commit it is fetched at, when known without the hub
    commit_from: str | None  # "config", "module", a lock file path, or None
    checksum_from: str | None  # "config", "spec", a lock file path, or None
    note: str = ""

    @property
    def pinned(self) -> bool:
        return bool(self.commit and self.checksum_from)

    def line(self) -> str:
        what = []
        if not self.commit:
            what.append(f"no commit (revision {self.revision or 'default branch'!r} not resolved yet)")
        if not self.checksum_from:
            what.append("no sha256" + (f" ({self.note})" if self.note else ""))
        return f"{self.kind} {self.repo} ({self.where}): {'; '.join(what) or 'pinned'}"


def _lock(root: Path, name: str) -> Path:
    return root / name


def _models(cfg: dict, key: str = "") -> list[tuple[str, dict]]:
    """Every hub model spec in the config tree, with its key."""
    found = []
    if isinstance(cfg, dict):
        if cfg.get("source") == "hf" and isinstance(cfg.get("path"), str) and "name" in cfg:
            return [(key, cfg)]
        for k, v in cfg.items():
            found += _models(v, f"{key}.{k}" if key else str(k))
    elif isinstance(cfg, list):
        for i, v in enumerate(cfg):
            found += _models(v, f"{key}[{i}]")
    return found


def _commit(
    repo: str, revision: str | None, repo_type: str, revision_lock: Path, module_pinned: bool = False
) -> tuple[str | None, str | None]:
    if revision and model_prep.FULL_COMMIT.match(revision):
        return revision, "module" if module_pinned else "config"
    got = model_prep.locked_commit(repo, revision, repo_type, revision_lock)
    return (got, str(revision_lock)) if got else (None, None)


def _file_pin(key: str, url: str, config_pin: str | None, spec_pin: str | None, lock: Path) -> str | None:
    return pins.expected_pin(key, url, config_pin, spec_pin, lock)[1] or None


def audit(cfg: dict, root: str | os.PathLike = ".") -> list[Pin]:
    """Every hub model and downloaded data file ``cfg`` asks for, with its pins (lock
    files are read under ``root``, the working directory of a run)."""
    root = Path(root)
    model_lock = _lock(root, model_prep.MODEL_LOCK)
    download_lock = _lock(root, pins.LOCK_FILE)
    revision_lock = _lock(root, model_prep.REVISION_LOCK)
    tracks = set(cfg.get("tracks") or [])
    out: list[Pin] = []

    seen = set()
    for key, spec in _models({k: v for k, v in cfg.items() if k in ("model", *tracks)}):
        ident = (spec["path"], spec.get("revision"))
        if ident in seen:
            continue
        seen.add(ident)
        commit, commit_from = _commit(spec["path"], spec.get("revision"), "model", revision_lock)
        checksum = None
        if commit:
            url = model_prep.hub_url(spec["path"], commit, model_prep.MANIFEST)
            if pins.read_lock(model_lock).get((f"{spec['path']}/{model_prep.MANIFEST}", url)):
                checksum = str(model_lock)
        out.append(
            Pin(
                "model",
                key,
                spec["path"],
                spec.get("revision"),
                commit,
                commit_from,
                checksum,
                "" if checksum else "recorded by the first download",
            )
        )

    if "sinq" in tracks and cfg["sinq"]["sources"].get("dataset") == "mbpp":
        from .data.sources import MBPP_FILES, MBPP_REPO, mbpp_url

        src = cfg["sinq"]["sources"]
        commit, commit_from = _commit(MBPP_REPO, src["mbpp_revision"], "dataset", revision_lock)
        for split in MBPP_FILES:
            key = f"sinq.sources.mbpp_sha256.{split}"
            config_pin = (src.get("mbpp_sha256") or {}).get(split)
            checksum = (
                _file_pin(key, mbpp_url(split, commit), config_pin, None, download_lock)
                if commit
                else ("config" if config_pin else None)
            )
            out.append(
                Pin(
                    "dataset",
                    key,
                    f"{MBPP_REPO}/{MBPP_FILES[split]}",
                    src["mbpp_revision"],
                    commit,
                    commit_from,
                    checksum,
                )
            )

    if "seq" in tracks and cfg["seq"]["sources"].get("dataset") in ("opinstruct", "hsx"):
        from .data.haskell_datasets import HSX_REPO, OPINSTRUCT_REPO, hub_file_url

        src, name = cfg["seq"]["sources"], cfg["seq"]["sources"]["dataset"]
        repo = {"opinstruct": OPINSTRUCT_REPO, "hsx": HSX_REPO}[name]
        commit, commit_from = _commit(repo, src[f"{name}_revision"], "dataset", revision_lock)
        key = f"seq.sources.{name}_sha256"
        config_pin = src.get(f"{name}_sha256")
        checksum = (
            _file_pin(key, hub_file_url(repo, src[f"{name}_file"], commit), config_pin, None, download_lock)
            if commit
            else ("config" if config_pin else None)
        )
        out.append(
            Pin(
                "dataset",
                key,
                f"{repo}/{src[f'{name}_file']}",
                src[f"{name}_revision"],
                commit,
                commit_from,
                checksum,
            )
        )

    if "evolve" in tracks and cfg["evolve"]["seeds"]["source"] == "download":
        from .tracks.evolve.downloads import DOWNLOADS, UNCONFIRMED, file_url, local_name

        seeds = cfg["evolve"]["seeds"]
        for name, dl in DOWNLOADS.items():
            if dl.source not in seeds["sources"]:
                continue
            revision = seeds["revisions"].get(name) or (None if dl.revision == UNCONFIRMED else dl.revision)
            commit, commit_from = _commit(
                dl.repo, revision, "dataset", revision_lock, module_pinned=not seeds["revisions"].get(name)
            )
            where = f"evolve.seeds.sources ({name})"
            if not dl.files_complete:
                out.append(
                    Pin(
                        "dataset",
                        where,
                        dl.repo,
                        revision,
                        commit,
                        commit_from,
                        None,
                        "its files are named by a pattern, known only from a listing at download",
                    )
                )
                continue
            for f in dl.files:
                key = f"evolve.seeds.sha256.{local_name(f.path)}"
                checksum = (
                    _file_pin(
                        key,
                        file_url(dl, f.path, commit),
                        seeds["sha256"].get(local_name(f.path)),
                        f.sha256,
                        download_lock,
                    )
                    if commit
                    else None
                )
                out.append(
                    Pin("dataset", key, f"{dl.repo}/{f.path}", revision, commit, commit_from, checksum)
                )

    if "psv" in tracks:
        from .data.verus_sets import verus_dataset_sources

        sources = verus_dataset_sources()
        for pset, settings in cfg["psv"]["problem_sets"].items():
            if settings.get("source") != "download":
                continue
            src = sources[settings["dataset"]]
            checksum = "config" if settings.get("sha256") else ("module" if src["sha256"] else None)
            out.append(
                Pin(
                    "dataset",
                    f"psv.problem_sets.{pset}",
                    f"{src['repo']} ({settings['dataset']})",
                    src["commit"],
                    src["commit"],
                    "module",
                    checksum,
                    "" if checksum else "the download only logs what it saw",
                )
            )

    evaluation = cfg.get("evaluation") or {}
    for bench, settings in (evaluation.get("benchmarks") or {}).items():
        if settings.get("source") != "download":
            continue
        from .evaluate.registry import downloads_of

        for d in downloads_of(bench):
            url = d["url"].format(revision=settings.get("revision", ""))
            try:
                rev = pins.check_revision(url)
                commit, commit_from = rev, "config" if "{revision}" in d["url"] else "module"
            except Exception:  # a branch: refused by the download itself
                rev, commit, commit_from = None, None, None
            checksum = (
                _file_pin(
                    f"{bench}/{d['file']}",
                    url,
                    (settings.get("sha256") or {}).get(d["file"]),
                    d.get("sha256"),
                    download_lock,
                )
                if commit
                else None
            )
            out.append(
                Pin(
                    "dataset",
                    f"evaluation.benchmarks.{bench}",
                    f"{bench}/{d['file']}",
                    rev,
                    commit,
                    commit_from,
                    checksum,
                )
            )
    return out


def unpinned(cfg: dict, root: str | os.PathLike = ".") -> list[str]:
    """One line per download of ``cfg`` that is not pinned by both commit and checksum."""
    return [p.line() for p in audit(cfg, root) if not p.pinned]


def load_config_files(paths: list[str | os.PathLike]) -> dict:
    """Config files merged left to right (nested mappings key by key, as Snakemake merges
    --configfile), checked and completed with the schema's defaults."""
    import yaml

    from .config import validate_config

    def merge(into: dict, new: dict) -> dict:
        for k, v in new.items():
            into[k] = merge(into[k], v) if isinstance(v, dict) and isinstance(into.get(k), dict) else v
        return into

    cfg: dict = {}
    for path in paths:
        merge(cfg, yaml.safe_load(Path(path).read_text()) or {})
    return validate_config(cfg)


def main(argv: list[str] | None = None) -> int:
    """``python -m selfplay.pin_audit CONFIG...``: the downloads of the merged config that are
    not pinned by commit and checksum, one a line (lock files read in the current folder)."""
    import sys

    paths = list(sys.argv[1:] if argv is None else argv)
    lines = unpinned(load_config_files(paths))
    print("\n".join(lines) if lines else "every download is pinned by commit and checksum")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
