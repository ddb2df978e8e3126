"""Hub model downloads pinned by commit and by each file's sha256 (issue 19), checked
without network: ``FakeHub`` is a test double standing in for the two hub calls
(``selfplay.llm.model_prep.HubClient``), serving files from a local folder laid out as
``<root>/<repo>/<commit>/<files>`` with a ``branches`` map for resolution."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

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
        ("model:org/m@main", "https://huggingface.co/org/m/tree/main"): C1}
    hub.branches[("org/m", "main")] = C2                 # the branch moves on the hub
    info = model_prep.download_hf_model("org/m", tmp_path / "b", "main", hub=hub, **locks(tmp_path))
    assert info["commit"] == C1 and hub.resolved == [("org/m", "main")] and hub.fetched[-1] == ("org/m", C1)
    assert (tmp_path / "b/model.safetensors").read_text() == "weights-1"


def test_every_file_and_the_listing_are_pinned_at_the_first_download(tmp_path, hub):
    info = model_prep.download_hf_model("org/m", tmp_path / "a", C1, hub=hub, **locks(tmp_path))
    assert hub.resolved == []                                      # a commit needs no resolution
    lock = pins.read_lock(tmp_path / "model-pins.tsv")
    keys = sorted(k for k, _ in lock)
    assert keys == ["org/m/@manifest", "org/m/config.json", "org/m/model.safetensors", "org/m/sub/t.json"]
    assert lock[("org/m/model.safetensors", f"https://huggingface.co/org/m/resolve/{C1}/model.safetensors")] == \
        pins.file_sha256(tmp_path / "a/model.safetensors") == info["files"]["model.safetensors"]
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

    def fake_snapshot_download(**kw):                      # test double for the real download
        calls.update(kw)
        Path(kw["local_dir"]).mkdir(parents=True, exist_ok=True)
        (Path(kw["local_dir"]) / "config.json").write_text("{}")
        return kw["local_dir"]

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    model_prep.download_hf_model("org/m", tmp_path / "a", C1, ["*.json"], **locks(tmp_path))
    assert calls["repo_id"] == "org/m" and calls["revision"] == C1 and calls["allow_patterns"] == ["*.json"]


def test_prepare_model_reads_revision_and_files_from_the_model_spec(tmp_path, hub, monkeypatch):
    seen = {}
    monkeypatch.setattr(model_prep, "download_hf_model",
                        lambda repo, out, rev, files: seen.update(repo=repo, rev=rev, files=files))
    model_prep.prepare_model({"name": "m", "source": "hf", "path": "org/m", "revision": C1, "files": ["*.json"]},
                             tmp_path / "m")
    assert seen == {"repo": "org/m", "rev": C1, "files": ["*.json"]}
