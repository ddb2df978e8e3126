"""Hub model downloads pinned by commit and by each file's sha256 (issue 19), checked
without network: ``FakeHub`` is a test double standing in for the two hub calls
(``selfplay.llm.model_prep.HubClient``), serving files from a local folder laid out as
``<root>/<repo>/<commit>/<files>`` with a ``branches`` map for resolution."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from workflow_helpers import plan_workflow

from selfplay.errors import UserError
from selfplay.evaluate import pins
from selfplay.llm import model_prep

C1 = "1" * 40
C2 = "2" * 40


class FakeHub:
    """Test double for HubClient: a local folder of repository snapshots."""

    def __init__(self, root: Path, branches: dict[tuple[str, str], str]):
        self.root, self.branches = root, branches
        self.resolved: list[tuple[str, str]] = []
        self.fetched: list[tuple[str, str]] = []

    def resolve(self, repo_id, revision, repo_type="model"):
        self.resolved.append((repo_id, revision))
        return self.branches[(repo_id, revision or "main")]

    def snapshot(self, repo_id, commit, dest, allow_patterns=None):
        import fnmatch

        self.fetched.append((repo_id, commit))
        src = self.root / repo_id / commit
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            rel = path.relative_to(src).as_posix()
            if allow_patterns and not any(fnmatch.fnmatch(rel, pat) for pat in allow_patterns):
                continue
            (Path(dest) / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(dest) / rel)
        # what huggingface_hub leaves in a local_dir download: never part of the pins
        (Path(dest) / ".cache/huggingface").mkdir(parents=True, exist_ok=True)
        (Path(dest) / ".cache/huggingface/x.lock").write_text("lock")


def make_repo(root: Path, repo: str, commit: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / repo / commit / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / repo / commit / rel).write_text(text)


@pytest.fixture
def hub(tmp_path):
    root = tmp_path / "hub"
    make_repo(root, "org/m", C1, {"config.json": "{}", "model.safetensors": "weights-1", "sub/t.json": "t"})
    make_repo(root, "org/m", C2, {"config.json": "{}", "model.safetensors": "weights-2", "sub/t.json": "t"})
    return FakeHub(root, {("org/m", "main"): C1})


def locks(tmp_path):
    return {"lock_path": tmp_path / "model-pins.tsv", "revision_lock": tmp_path / "revision-pins.tsv"}


def test_a_branch_is_resolved_once_and_every_later_download_fetches_the_recorded_commit(tmp_path, hub):
    info = model_prep.download_hf_model("org/m", tmp_path / "a", "main", hub=hub, **locks(tmp_path))
    assert info["commit"] == C1 and hub.resolved == [("org/m", "main")]
    assert pins.read_lock(tmp_path / "revision-pins.tsv", model_prep.FULL_COMMIT) == {
        ("model:org/m@main", "https://huggingface.co/org/m/tree/main"): C1
    }
    hub.branches[("org/m", "main")] = C2  # the branch moves on the hub
    info = model_prep.download_hf_model("org/m", tmp_path / "b", "main", hub=hub, **locks(tmp_path))
    assert info["commit"] == C1 and hub.resolved == [("org/m", "main")] and hub.fetched[-1] == ("org/m", C1)
    assert (tmp_path / "b/model.safetensors").read_text() == "weights-1"


def test_every_file_and_the_listing_are_pinned_at_the_first_download(tmp_path, hub):
    info = model_prep.download_hf_model("org/m", tmp_path / "a", C1, hub=hub, **locks(tmp_path))
    assert hub.resolved == []  # a commit needs no resolution
    lock = pins.read_lock(tmp_path / "model-pins.tsv")
    keys = sorted(k for k, _ in lock)
    assert keys == ["org/m/@manifest", "org/m/config.json", "org/m/model.safetensors", "org/m/sub/t.json"]
    assert (
        lock[("org/m/model.safetensors", f"https://huggingface.co/org/m/resolve/{C1}/model.safetensors")]
        == pins.file_sha256(tmp_path / "a/model.safetensors")
        == info["files"]["model.safetensors"]
    )
    assert not (tmp_path / "a/.cache").exists() and (tmp_path / "a/selfplay_model.json").is_file()


def test_a_changed_file_under_the_same_commit_stops_the_download_and_keeps_nothing(tmp_path, hub):
    model_prep.download_hf_model("org/m", tmp_path / "a", C1, hub=hub, **locks(tmp_path))
    (hub.root / "org/m" / C1 / "model.safetensors").write_text("tampered")
    with pytest.raises(UserError, match=r"org/m/model.safetensors: sha256 mismatch: pinned [0-9a-f]{64}"):
        model_prep.download_hf_model("org/m", tmp_path / "b", C1, hub=hub, **locks(tmp_path))
    assert not (tmp_path / "b").exists() and not (tmp_path / "b.partial").exists()


def test_a_missing_or_extra_file_is_a_mismatch_of_the_pinned_listing(tmp_path, hub):
    model_prep.download_hf_model("org/m", tmp_path / "a", C1, hub=hub, **locks(tmp_path))
    (hub.root / "org/m" / C1 / "sub/t.json").unlink()
    with pytest.raises(UserError, match=r"set of files differs .*missing \['sub/t.json'\]"):
        model_prep.download_hf_model("org/m", tmp_path / "b", C1, hub=hub, **locks(tmp_path))


def test_file_patterns_limit_the_download(tmp_path, hub):
    info = model_prep.download_hf_model("org/m", tmp_path / "a", C1, ["*.json"], hub=hub, **locks(tmp_path))
    assert sorted(info["files"]) == ["config.json", "sub/t.json"]


def test_the_hub_client_passes_the_commit_and_patterns_to_huggingface_hub(tmp_path, monkeypatch):
    import huggingface_hub

    calls = {}

    def fake_snapshot_download(**kw):  # test double for the real download
        calls.update(kw)
        Path(kw["local_dir"]).mkdir(parents=True, exist_ok=True)
        (Path(kw["local_dir"]) / "config.json").write_text("{}")
        return kw["local_dir"]

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    model_prep.download_hf_model("org/m", tmp_path / "a", C1, ["*.json"], **locks(tmp_path))
    assert calls["repo_id"] == "org/m" and calls["revision"] == C1 and calls["allow_patterns"] == ["*.json"]


def test_prepare_model_reads_revision_and_files_from_the_model_spec(tmp_path, hub, monkeypatch):
    seen = {}
    monkeypatch.setattr(
        model_prep,
        "download_hf_model",
        lambda repo, out, rev, files: seen.update(repo=repo, rev=rev, files=files),
    )
    model_prep.prepare_model(
        {"name": "m", "source": "hf", "path": "org/m", "revision": C1, "files": ["*.json"]}, tmp_path / "m"
    )
    assert seen == {"repo": "org/m", "rev": C1, "files": ["*.json"]}


# --- the embedding model of EvolveCoder's de-duplication (paper 002 Sec. 2.1) ---------

REPO = Path(__file__).resolve().parent.parent


def plan_jobs(stdout: str) -> list[str]:
    """A dry run's job blocks, each from its 'rule <name>:' line."""
    import re

    return re.split(r"\n(?=(?:local)?rule \w+:)", stdout)


def test_the_evolve_paper_config_downloads_the_embedder_and_feeds_it_to_the_embedding_job(tmp_path):
    """Planning the seeds' embeddings of the paper config: rule prepare_model downloads
    all-mpnet-base-v2 and evolve_embed takes the folder as an input (it had no download
    and loaded a hub id offline, which cannot work)."""
    proc = plan_workflow(
        tmp_path,
        "results/evolve/paper/seeds/embeddings.npy",
        "--configfile",
        str(REPO / "config/papers/evolve.yaml"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    jobs = plan_jobs(proc.stdout)
    download = [j for j in jobs if "rule prepare_model:" in j and "model=all-mpnet-base-v2" in j]
    embed = [j for j in jobs if "rule evolve_embed:" in j]
    assert len(download) == 1 and len(embed) == 1
    assert "resources/models/all-mpnet-base-v2" in embed[0].split("input:")[1].split("\n")[0]


def test_the_embedded_default_embeds_with_the_packaged_model_and_downloads_nothing(tmp_path):
    proc = plan_workflow(
        tmp_path, "results/evolve/default/seeds/embeddings.npy", "--configfile", str(REPO / "config.yaml")
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    embed = [j for j in plan_jobs(proc.stdout) if "rule evolve_embed:" in j]
    assert len(embed) == 1 and "resources/models" not in embed[0]


def test_the_embedder_loads_a_folder_downloaded_the_way_the_rule_downloads_it(tmp_path):
    """The packaged MiniLM served as a hub repository by the FakeHub test double, fetched
    with the paper config's file patterns by the download prepare_model runs, then loaded
    offline by the embedding step: same vectors as the packaged folder, and the identity
    recorded beside the embeddings names the hub repository and commit."""
    import numpy as np
    import yaml

    pytest.importorskip("sentence_transformers")
    from selfplay import embeddings as embed

    packaged = embed.packaged_model_path()
    spec = yaml.safe_load((REPO / "config/papers/evolve.yaml").read_text())["evolve"]["dedup"]["model"]
    root = tmp_path / "hub"
    shutil.copytree(packaged, root / spec["path"] / spec["revision"])
    (root / spec["path"] / spec["revision"] / "onnx").mkdir()
    (root / spec["path"] / spec["revision"] / "onnx/model.onnx").write_text("not fetched")
    hub = FakeHub(root, {})
    folder = tmp_path / "resources/models" / spec["name"]
    model_prep.download_hf_model(
        spec["path"], folder, spec["revision"], spec["files"], hub=hub, **locks(tmp_path)
    )
    assert not (folder / "onnx").exists() and (folder / "modules.json").is_file()
    texts = ["Return the sum of two integers.", "Add two numbers and return the result.", "Sort a list."]
    got = embed.embed_texts(texts, str(folder))
    want = embed.embed_texts(texts, None)
    assert got.shape == want.shape and np.allclose(got, want, atol=1e-5)
    identity = embed.model_identity(str(folder))
    assert identity["source"] == f"hf:{spec['path']}" and identity["commit"] == spec["revision"]


def test_the_embedder_refuses_a_folder_that_is_not_a_sentence_transformers_model(tmp_path):
    from selfplay import embeddings as embed

    with pytest.raises(UserError, match="no modules.json"):
        embed.resolve_model_path(tmp_path)


# --- the audit of what a paper config leaves unpinned ---------------------------------

PAPERS = {
    "sinq": ["sinq.yaml"],
    "seq": ["seq.yaml"],
    "seq_e1": ["seq.yaml", "seq_e1.yaml"],
    "seq_e2": ["seq.yaml", "seq_e2.yaml"],
    "seq_e3": ["seq.yaml", "seq_e3.yaml"],
    "psv": ["psv.yaml"],
    "evolve": ["evolve.yaml"],
}


def paper_config(name):
    from selfplay.pin_audit import load_config_files

    return load_config_files([REPO / "config/papers" / f for f in PAPERS[name]])


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_every_paper_config_model_is_pinned_by_commit_but_the_ones_no_source_gave(name, tmp_path):
    """Only the models whose commit no stored source gave are at a branch; every other hub
    model of a paper config names a full commit (they were all at main)."""
    from selfplay.pin_audit import audit

    models = [p for p in audit(paper_config(name), tmp_path) if p.kind == "model"]
    assert models, "every paper config downloads at least its base model"
    without_commit = {p.repo for p in models if not p.commit}
    assert without_commit == ({"XiaomiMiMo/MiMo-7B-RL"} if name == "evolve" else set())
    assert all(p.commit_from == "config" for p in models if p.commit)


def test_the_audit_lists_the_unpinned_downloads_of_the_paper_configs_until_the_locks_pin_them(tmp_path, hub):
    """Without lock files the models lack their files' sha256; the OpenCodeInstruct shard
    is pinned by commit and sha256 in config; seeds without a confirmed commit lack both.
    After a first download wrote the locks, the same model counts as pinned."""
    from selfplay.pin_audit import audit, unpinned

    seq = unpinned(paper_config("seq"), tmp_path)
    assert not any("OpenCodeInstruct" in line for line in seq)
    assert (
        "model deepseek-ai/DeepSeek-R1-Distill-Qwen-7B (model): no sha256 (recorded by the first download)"
        in seq
    )
    evolve = unpinned(paper_config("evolve"), tmp_path)
    for repo in (
        "PrimeIntellect/verifiable-coding-problems",
        "open-r1/codeforces-cots",
        "open-r1/codeforces",
    ):
        assert any(line.startswith(f"dataset {repo} ") and "no commit" in line for line in evolve)
    assert not any("code_contests/data/valid" in line for line in evolve)  # sha256 in the module
    assert any(
        line.startswith("dataset codeparrot/apps/train.jsonl") and "no commit" not in line for line in evolve
    )

    cfg = {"tracks": [], "model": {"name": "m", "source": "hf", "path": "org/m", "revision": "main"}}
    assert unpinned(cfg, tmp_path) == [
        "model org/m (model): no commit (revision 'main' not resolved yet); no sha256 "
        "(recorded by the first download)"
    ]
    model_prep.download_hf_model(
        "org/m",
        tmp_path / "resources/models/m",
        "main",
        hub=hub,
        lock_path=tmp_path / model_prep.MODEL_LOCK,
        revision_lock=tmp_path / model_prep.REVISION_LOCK,
    )
    (pin,) = audit(cfg, tmp_path)
    assert pin.pinned and pin.commit == C1 and pin.commit_from.endswith("revision-pins.tsv")
    assert unpinned(cfg, tmp_path) == []


def test_a_dataset_file_without_a_config_sha256_is_recorded_once_and_must_match_after(tmp_path, monkeypatch):
    """The sinq/seq download rule's step: no sha256 in config, so the first download records
    the file's in the lock; a later download of other bytes at the same URL stops."""
    from selfplay.data import sources

    served = {"bytes": b"rows-1"}

    def fake_download_checked(url, dest, sha256, timeout=120.0):  # test double for the HTTP fetch
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        Path(dest).write_bytes(served["bytes"])
        return pins.file_sha256(dest)

    monkeypatch.setattr(sources, "download_checked", fake_download_checked)
    lock = tmp_path / "download-pins.tsv"
    url = f"https://huggingface.co/datasets/org/d/resolve/{C1}/f.parquet"
    log_ = logging.getLogger("test")
    got = sources.download_pinned(
        url, str(tmp_path / "a"), None, "seq.sources.hsx_sha256", log_, lock_path=lock
    )
    assert pins.read_lock(lock) == {("seq.sources.hsx_sha256", url): got}
    assert (
        sources.download_pinned(
            url, str(tmp_path / "b"), None, "seq.sources.hsx_sha256", log_, lock_path=lock
        )
        == got
    )
    served["bytes"] = b"rows-2"
    with pytest.raises(UserError, match="sha256 mismatch"):
        sources.download_pinned(
            url, str(tmp_path / "c"), None, "seq.sources.hsx_sha256", log_, lock_path=lock
        )
    assert not (tmp_path / "c").exists()


def test_a_dataset_url_at_a_branch_is_fetched_at_the_commit_recorded_for_it(tmp_path, hub):
    hub.branches[("org/d", "main")] = C2
    lock = tmp_path / "revision-pins.tsv"
    url = "https://huggingface.co/datasets/org/d/resolve/main/data/f.parquet"
    want = f"https://huggingface.co/datasets/org/d/resolve/{C2}/data/f.parquet"
    assert model_prep.pin_hub_url(url, lock, hub) == want
    hub.branches[("org/d", "main")] = C1  # the branch moves: the recorded commit stays
    assert model_prep.pin_hub_url(url, lock, hub) == want and hub.resolved == [("org/d", "main")]
    pinned = f"https://huggingface.co/datasets/org/d/resolve/{C1}/x"
    assert model_prep.pin_hub_url(pinned, lock, hub) == pinned


def test_an_evolve_seed_source_without_a_confirmed_commit_is_fetched_at_the_commit_recorded_for_it(
    tmp_path, monkeypatch
):
    """Codeforces has no confirmed commit: the first download resolves the default branch
    once (recorded), lists the repository there and records each file's sha256; the second
    download uses the recorded commit though the branch moved (test doubles: the hub's
    resolution, listing and file fetch)."""
    import huggingface_hub

    from selfplay.data import sources
    from selfplay.pipeline import evolve
    from selfplay.records import read_json

    monkeypatch.chdir(tmp_path)
    branch = {"open-r1/codeforces-cots": C1, "open-r1/codeforces": C2}
    listed, fetched = [], []
    monkeypatch.setattr(model_prep.HubClient, "resolve", lambda self, repo, rev, kind="model": branch[repo])

    def fake_list_repo_files(repo, repo_type=None, revision=None):  # test double for the hub listing
        listed.append((repo, revision))
        return [
            "README.md",
            "solutions_py/train-00000-of-00001.parquet",
            "data/train-00000-of-00001.parquet",
            "data/test-00000-of-00001.parquet",
        ]

    def fake_download_checked(url, dest, sha256, timeout=120.0):  # test double for the HTTP fetch
        fetched.append(url)
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        Path(dest).write_text(url.rsplit("/", 1)[1])
        return pins.file_sha256(dest)

    monkeypatch.setattr(huggingface_hub, "list_repo_files", fake_list_repo_files)
    monkeypatch.setattr(sources, "download_checked", fake_download_checked)
    cfg = {"evolve": {"seeds": {"revisions": {}, "sha256": {}}}}
    log_ = logging.getLogger("test")
    evolve.download_seed_source(cfg, "codeforces", str(tmp_path / "a"), log_)
    assert listed == [("open-r1/codeforces-cots", C1), ("open-r1/codeforces", C2)]
    assert all(f"/resolve/{C1}/" in u or f"/resolve/{C2}/" in u for u in fetched) and len(fetched) == 3
    assert len(pins.read_lock(tmp_path / pins.LOCK_FILE)) == 3
    assert len(pins.read_lock(tmp_path / model_prep.REVISION_LOCK, model_prep.FULL_COMMIT)) == 2
    branch.update({"open-r1/codeforces-cots": C2, "open-r1/codeforces": C1})  # the branches move
    evolve.download_seed_source(cfg, "codeforces", str(tmp_path / "b"), log_)
    assert listed[2:] == listed[:2]
    assert read_json(tmp_path / "b/files.json")["codeforces"]["train"][0].endswith(
        "solutions_py__train-00000-of-00001.parquet"
    )
