"""Reproduction bundles: the manifest and its check, restoring training from a bundle,
and the round trip: `snakemake bundle` on a small run, then `selfplay bundle replay` of
the bundle in a fresh folder with the model out of reach (its path points nowhere and
torch/transformers cannot even be imported), which must give byte-identical tables.
"""

from __future__ import annotations

import json
import os
import tarfile
import time
from pathlib import Path

import pytest
import yaml
from test_workflow_replay import build_scenario
from workflow_helpers import (
    default_config,
    jobs_run,
    no_model_env,
    run_snakemake,
    selfplay_cli,
    write_config,
)

from selfplay.bundle.manifest import (
    MANIFEST_NAME,
    SUMS_NAME,
    BundleCheckError,
    build_manifest,
    check_manifest,
    write_manifest,
)
from selfplay.bundle.pack import write_tar_gz
from selfplay.bundle.replay import NO_MODEL, compare, replay_config, retrained_adapter_note, unpack
from selfplay.bundle.restore import RESTORED_KEY, restore_training_output
from selfplay.cli import main as selfplay_main
from selfplay.config import validate_config
from selfplay.errors import UserError
from selfplay.records import read_json, read_jsonl, sha256_file, sha256_tree, write_json, write_jsonl

TABLES = [
    "results/tables/sinq/table1.csv",
    "results/tables/sinq/table1.md",
    "results/tables/sinq/yield.csv",
    "results/tables/sinq/yield.md",
    "results/tables/sinq/yield_reasons.csv",
    "results/figures/sinq/figure2.csv",
    # the benchmark layer: paper 001's Tables 2-4 and Figure 3, and the layer's own check
    *[f"results/tables/sinq/table{n}.{ext}" for n in (2, 3, 4) for ext in ("csv", "md")],
    "results/figures/sinq/figure3.csv",
    "results/tables/eval/benchmarks.csv",
    "results/tables/eval/benchmarks.md",
]


# --------------------------------------------------------------------------- manifest


def small_tree(root: Path) -> Path:
    (root / "results/sinq/x/round1/alice").mkdir(parents=True)
    (root / "results/sinq/x/round1/alice/shard0.jsonl").write_text('{"key": "k", "outputs": ["a"]}\n')
    (root / "results/tables").mkdir(parents=True)
    (root / "results/tables/t.csv").write_text("a,b\n1,2\n")
    (root / "config.yaml").write_text("seed: 1\n")
    return root


def test_manifest_lists_every_file_with_size_and_sha256(tmp_path):
    root = small_tree(tmp_path / "b")
    manifest = build_manifest(
        root,
        {"config.yaml": "config"},
        [{"path": "w.safetensors", "kind": "adapter", "size": 3, "sha256": "0" * 64}],
    )
    write_manifest(root, manifest)
    by_path = {e["path"]: e for e in manifest["files"]}
    assert sorted(by_path) == [
        "config.yaml",
        "results/sinq/x/round1/alice/shard0.jsonl",
        "results/tables/t.csv",
    ]
    assert by_path["config.yaml"]["kind"] == "config" and by_path["results/tables/t.csv"]["kind"] == "other"
    assert by_path["results/tables/t.csv"]["size"] == 8
    assert by_path["results/tables/t.csv"]["sha256"] == sha256_file(root / "results/tables/t.csv")
    assert manifest["not_included"][0]["path"] == "w.safetensors"
    # The plain-text twin works with sha256sum -c.
    sums = (root / SUMS_NAME).read_text().splitlines()
    assert f"{by_path['config.yaml']['sha256']}  config.yaml" in sums
    assert check_manifest(root)["files"] == manifest["files"]


def test_one_changed_byte_is_caught_in_one_line(tmp_path):
    root = small_tree(tmp_path / "b")
    write_manifest(root, build_manifest(root))
    rec = root / "results/sinq/x/round1/alice/shard0.jsonl"
    data = bytearray(rec.read_bytes())
    data[-3] ^= 0x01  # same size, one bit flipped
    rec.write_bytes(bytes(data))
    with pytest.raises(BundleCheckError) as err:
        check_manifest(root)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg == (
        "bundle check failed: results/sinq/x/round1/alice/shard0.jsonl: sha256 differs from the "
        "manifest (the file was changed after bundling)"
    )


def test_missing_extra_and_resized_files_are_caught(tmp_path):
    root = small_tree(tmp_path / "b")
    write_manifest(root, build_manifest(root))
    (root / "results/tables/t.csv").unlink()
    (root / "config.yaml").write_text("seed: 12\n")
    (root / "stowaway.txt").write_text("x")
    with pytest.raises(
        BundleCheckError,
        match=r"config.yaml: size 9 bytes, the manifest says 8 \(and 2 more "
        r"problems\)",
    ):
        check_manifest(root)


def test_manifest_paths_must_stay_inside_the_bundle(tmp_path):
    root = small_tree(tmp_path / "b")
    manifest = build_manifest(root)
    manifest["files"].append({"path": "../outside", "kind": "other", "size": 0, "sha256": ""})
    write_manifest(root, manifest)
    with pytest.raises(BundleCheckError, match="not a relative path inside the bundle"):
        check_manifest(root)


def test_not_a_bundle(tmp_path):
    with pytest.raises(BundleCheckError, match="no MANIFEST.json"):
        check_manifest(tmp_path)


def test_tarball_is_deterministic_and_unpacks_to_one_folder(tmp_path):
    root = small_tree(tmp_path / "b")
    write_manifest(root, build_manifest(root))
    write_tar_gz(root, "b", tmp_path / "one.tar.gz", 1_700_000_000)
    os.utime(root / "config.yaml", (1, 1))  # file times do not leak into the archive
    write_tar_gz(root, "b", tmp_path / "two.tar.gz", 1_700_000_000)
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    unpacked = unpack(tmp_path / "one.tar.gz", tmp_path / "out")
    assert unpacked == (tmp_path / "out/b").resolve()
    check_manifest(unpacked)


def test_cli_verify(tmp_path, capsys):
    root = small_tree(tmp_path / "b")
    write_manifest(root, build_manifest(root))
    write_tar_gz(root, "b", tmp_path / "b.tar.gz", 1_700_000_000)
    assert selfplay_main(["bundle", "verify", str(tmp_path / "b.tar.gz")]) == 0
    assert "ok: all 3 files of bundle b match its manifest" in capsys.readouterr().out
    (root / "results/tables/t.csv").write_text("a,b\n1,3\n")
    assert selfplay_main(["bundle", "verify", str(root)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results/tables/t.csv: sha256 differs" in err


def test_cli_verify_damaged_tarball(tmp_path, capsys):
    root = small_tree(tmp_path / "b")
    write_manifest(root, build_manifest(root))
    tar = tmp_path / "b.tar.gz"
    write_tar_gz(root, "b", tar, 1_700_000_000)
    data = bytearray(tar.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tar.write_bytes(bytes(data))
    assert selfplay_main(["bundle", "verify", str(tar)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot unpack" in err


# --------------------------------------------------------------------------- restoring training


def bundled_training(tmp_path: Path, weights: bool, trained: bool = True) -> tuple[Path, Path]:
    """A bundled training output folder and the training set it was trained on."""
    trainset = tmp_path / "work/train.jsonl"
    write_jsonl(trainset, [{"prompt": [], "completion": []}])
    src = tmp_path / "bundle/results/adapter"
    src.mkdir(parents=True)
    (src / "adapter_config.json").write_text('{"r": 4}')
    (src / "adapter_model.safetensors").write_bytes(b"\x00weights")
    record = {
        "trained": trained,
        "n_examples": 1,
        "adapter_sha256": sha256_tree(src),
        "trainset": "train.jsonl",
        "trainset_sha256": sha256_file(trainset),
    }
    if not weights:  # as bundled without the weights: the adapter config stays
        (src / "adapter_model.safetensors").unlink()
    write_json(src / "training_record.json", record)
    (src / ".snakemake_timestamp").write_text("")  # Snakemake marks directory outputs so
    return src / "training_record.json", trainset


@pytest.mark.parametrize("weights", [True, False])
def test_restore_puts_the_record_in_place_and_marks_it(tmp_path, weights):
    bundled, trainset = bundled_training(tmp_path, weights)
    out = tmp_path / "work/results/adapter"
    rec = restore_training_output(str(bundled), str(out), str(trainset), "replay")
    written = read_json(out / "training_record.json")
    assert written == rec
    assert written["adapter_sha256"] == read_json(bundled)["adapter_sha256"]
    assert written[RESTORED_KEY]["adapter_weights"] is weights
    assert written[RESTORED_KEY]["record_sha256"] == sha256_file(bundled)
    assert (out / "adapter_model.safetensors").is_file() is weights
    assert (out / "adapter_config.json").is_file() is weights  # without weights the record stands alone
    assert not (out / ".snakemake_timestamp").exists()
    assert oct(out.stat().st_mode & 0o777) == "0o755"


def test_restore_refuses_a_different_training_set(tmp_path):
    bundled, trainset = bundled_training(tmp_path, weights=False)
    write_jsonl(trainset, [{"prompt": [], "completion": []}, {"prompt": [], "completion": []}])
    with pytest.raises(UserError, match="differs from the one the bundled record .* was trained on"):
        restore_training_output(str(bundled), str(tmp_path / "out"), str(trainset), "replay")
    assert not (tmp_path / "out").exists()


def test_restore_checks_the_weights_against_adapter_sha256(tmp_path):
    bundled, trainset = bundled_training(tmp_path, weights=True)
    (bundled.parent / "adapter_model.safetensors").write_bytes(b"\x00weightz")
    with pytest.raises(UserError, match="do not hash to the record's adapter_sha256"):
        restore_training_output(str(bundled), str(tmp_path / "out"), str(trainset), "replay")


def test_restore_without_weights_needs_the_replay_backend(tmp_path):
    bundled, trainset = bundled_training(tmp_path, weights=False)
    with pytest.raises(UserError, match="not its weights"):
        restore_training_output(str(bundled), str(tmp_path / "out"), str(trainset), "transformers")
    # A step that trained nothing has no weights to miss.
    bundled, trainset = bundled_training(tmp_path / "skip", weights=False, trained=False)
    restore_training_output(str(bundled), str(tmp_path / "out"), str(trainset), "transformers")


# --------------------------------------------------------------------------- config


def test_config_keys():
    cfg = default_config()
    assert cfg["bundle"] == {"name": None, "include_adapters": False, "report": True}
    validate_config(dict(cfg, replay_training_from="/some/bundle"))
    with pytest.raises(UserError, match="bundle"):
        validate_config(dict(cfg, bundle={"include_adapter": True}))
    with pytest.raises(UserError, match="bundle.name"):
        validate_config(dict(cfg, bundle={"name": "a/b"}))


def test_replay_config_replays_recordings_and_hides_the_model(tmp_path):
    root = tmp_path / "b"
    root.mkdir()
    (root / "config.yaml").write_text(yaml.safe_dump(default_config()))
    meta = {"recordings": ["results/sinq/default/round1/alice/shard0.jsonl"]}
    cfg = replay_config(root, meta, tmp_path / "work", retrain=False, model=None)
    assert cfg["backend"] == {
        "name": "replay",
        "files": [str(root / meta["recordings"][0])],
        "on_missing": "error",
    }
    assert cfg["replay_training_from"] == str(root)
    assert cfg["model"] == {
        "name": "smollm2-135m-instruct",
        "source": "local",
        "path": str(tmp_path / "work" / NO_MODEL),
    }
    validate_config(cfg)
    again = replay_config(root, meta, tmp_path / "work", retrain=True, model=str(tmp_path / "m"))
    assert "replay_training_from" not in again and again["model"]["path"] == str(tmp_path / "m")


def test_compare_names_the_first_differing_line(tmp_path):
    root, work = tmp_path / "b", tmp_path / "w"
    for d, text in ((root, "a\nb\n"), (work, "a\nc\n")):
        (d / "results").mkdir(parents=True)
        (d / "results/t.csv").write_text(text)
    result = compare(root, work, {"tables": ["results/t.csv"]}, retrain=False)
    assert not result.ok
    assert result.tables == [("results/t.csv", "line 2: bundle b'b' vs replay b'c'")]


def record_has_runtime(path):
    record = read_json(path)
    return record["runtime"]["image"] == "host" and bool(record["runtime"]["tools"]["python"])


def test_retrained_adapter_is_compared_by_weights_not_by_module_order(tmp_path):
    root, work = tmp_path / "b", tmp_path / "w"
    for d, modules, weights in ((root, ["q_proj", "v_proj"], b"w1"), (work, ["v_proj", "q_proj"], b"w1")):
        (d / "ad").mkdir(parents=True)
        (d / "ad/adapter_config.json").write_text(json.dumps({"r": 4, "target_modules": modules}))
        (d / "ad/adapter_model.safetensors").write_bytes(weights)
        write_json(d / "ad/training_record.json", {"trained": True, "adapter_sha256": sha256_tree(d / "ad")})
    manifest = build_manifest(root, {}, [])
    (root / "ad/adapter_model.safetensors").unlink()  # left out of the bundle: only its checksum is there
    manifest["not_included"] = [e for e in manifest["files"] if e["path"].endswith(".safetensors")]
    note = retrained_adapter_note(root, work, "ad/training_record.json", manifest)
    assert note.startswith("same weights")
    (work / "ad/adapter_model.safetensors").write_bytes(b"w2")
    assert retrained_adapter_note(root, work, "ad/training_record.json", manifest).startswith(
        "differs: adapter_model.safetensors"
    )


def test_bundle_rule_in_the_plan(tmp_path):
    """`snakemake -n bundle` plans the whole run plus the bundle, which is not part of `all`."""
    write_config(tmp_path, default_config())
    plan = run_snakemake(tmp_path, "-n", "bundle")
    jobs = jobs_run(plan)
    assert jobs["bundle"] == 1 and jobs["sinq_table1"] == 1
    assert jobs["seq_table2"] == 1 and jobs["seq_table3"] == 1  # the default bundles both tracks
    assert "bundle" not in jobs_run(run_snakemake(tmp_path, "-n"))


# --------------------------------------------------------------------------- round trip


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory, tiny_model_dir):
    """The replay scenario of test_workflow_replay.py (training on the tiny model), bundled in one go.

    One Alice round instead of two keeps the file within about five minutes: each
    training step costs about a minute on 2 cores, and the eval stages still generate
    with the (restored) round-1 adapter. The recording keys do not depend on the
    number of rounds, so the scenario's recordings serve as they are.
    """
    workdir = tmp_path_factory.mktemp("bundle_run")
    cfg = build_scenario(workdir)
    cfg["tracks"] = ["sinq"]  # the Haskell track's round trip is in test_workflow_seq.py
    cfg["sinq"]["rounds"] = 1
    cfg["model"]["path"] = str(tiny_model_dir)
    cfg["bundle"] = {"name": "roundtrip", "include_adapters": False, "report": True}
    write_config(workdir, cfg)
    started = time.perf_counter()
    proc = run_snakemake(workdir, "bundle")
    seconds = time.perf_counter() - started
    return workdir, proc, seconds


@pytest.fixture(scope="module")
def replayed(bundled_run, tmp_path_factory):
    workdir, _, _ = bundled_run
    out = tmp_path_factory.mktemp("replayed") / "replay"
    env = no_model_env(tmp_path_factory.mktemp("no_model_site"))
    started = time.perf_counter()
    proc = selfplay_cli(
        "bundle",
        "replay",
        str(workdir / "results/bundle/roundtrip.tar.gz"),
        "--out",
        str(out),
        "--cores",
        "2",
        env=env,
    )
    return out, proc, time.perf_counter() - started


@pytest.mark.slow
def test_bundle_holds_the_run(bundled_run, tmp_path):
    workdir, proc, _ = bundled_run
    assert jobs_run(proc)["bundle"] == 1
    tar_path = workdir / "results/bundle/roundtrip.tar.gz"
    with tarfile.open(tar_path) as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "roundtrip"
    manifest = check_manifest(root)
    kinds = {e["path"]: e["kind"] for e in manifest["files"]}
    exp = "results/sinq/replaytest"
    for rel, kind in [
        ("config.yaml", "config"),
        ("environment/pip-freeze.txt", "environment"),
        ("environment/python.json", "environment"),
        ("report.html", "report"),
        ("workflow/Snakefile", "workflow-source"),
        ("workflow/src/selfplay/bundle/pack.py", "workflow-source"),
        ("resources/data/sinq/humaneval_train.jsonl", "input-data"),
        (f"{exp}/round1/alice/shard0.jsonl", "recording"),
        (f"{exp}/eval_test/bob_trained/shard1.jsonl", "recording"),
        (f"{exp}/round1/candidates/shard0.jsonl", "verdict"),
        (f"{exp}/eval_test/labeled_trained/shard0.jsonl", "verdict"),
        (f"{exp}/round1/train_alice.jsonl", "trainset"),
        (f"{exp}/bob/adapter/training_record.json", "training-record"),
        ("results/figures/sinq/figure2.png", "figure"),
        ("results/figures/sinq/figure2.csv", "table"),
        ("README.md", "metadata"),
        ("bundle.json", "metadata"),
    ] + [(t, "table") for t in TABLES]:
        assert kinds.get(rel) == kind, rel
    assert f"roundtrip/{MANIFEST_NAME}" in names
    # The config actually used, the versions, the report.
    assert yaml.safe_load((root / "config.yaml").read_text())["sinq"]["experiment"] == "replaytest"
    assert "snakemake==" in (root / "environment/pip-freeze.txt").read_text()
    # The container definitions (and what they copy in) and the image each rule named.
    for name in (
        "python-sandbox.def",
        "gpu.def",
        "haskell.def",
        "verus.def",
        "images.yaml",
        "requirements-gpu.txt",
    ):
        assert kinds.get(f"environment/containers/{name}") == "environment", name
    images = read_json(root / "environment/containers/images.json")
    assert (
        images["sandbox"]["ref"].startswith("oras://") and images["gpu"]["definition"] == "containers/gpu.def"
    )
    verdict = read_jsonl(root / f"{exp}/round1/candidates/shard0.jsonl")[0]
    assert verdict["runtime"]["image"] == "host" and verdict["runtime"]["tools"]["python"]
    assert record_has_runtime(root / f"{exp}/round1/adapter_alice/training_record.json")
    html = (root / "report.html").read_text(errors="replace")
    assert "table1" in html and "figure2" in html
    # Adapter weights are left out, but their checksums are listed; records keep adapter_sha256.
    assert not any(n.endswith(".safetensors") for n in names)
    left_out = {e["path"] for e in manifest["not_included"]}
    assert f"{exp}/round1/adapter_alice/adapter_model.safetensors" in left_out
    assert kinds[f"{exp}/round1/adapter_alice/adapter_config.json"] == "adapter-config"
    assert not any(p.endswith(".snakemake_timestamp") for p in list(kinds) + list(left_out))
    record = read_json(root / f"{exp}/round1/adapter_alice/training_record.json")
    assert record["trained"] and len(record["adapter_sha256"]) == 64 and record["trainset_sha256"]
    meta = read_json(root / "bundle.json")
    # Alice and Bob per stage and shard, and the base model's and Bob's benchmark samples
    assert (
        sorted(meta["tables"]) == sorted(TABLES) and len(meta["recordings"]) == 3 * 2 + 3 * 2 + 2 * 2 + 10 * 2
    )


@pytest.mark.slow
def test_replay_reproduces_every_table_without_a_model(bundled_run, replayed):
    workdir, _, _ = bundled_run
    out, proc, _ = replayed
    assert proc.returncode == 0, proc.stdout + proc.stderr + (out / "snakemake.log").read_text()[-5000:]
    assert f"REPRODUCED: all {len(TABLES)} tables are byte-identical" in proc.stdout
    for table in TABLES:
        assert (out / "work" / table).read_bytes() == (workdir / table).read_bytes(), table
    log = (out / "snakemake.log").read_text()
    assert "prepare_model" not in log
    cfg = yaml.safe_load((out / "work/config.yaml").read_text())
    assert cfg["backend"]["name"] == "replay" and cfg["backend"]["on_missing"] == "error"
    assert not Path(cfg["model"]["path"]).exists()
    exp = out / "work/results/sinq/replaytest"
    for rel in ("round1/adapter_alice", "bob/adapter"):
        rec = read_json(exp / rel / "training_record.json")
        original = read_json(workdir / "results/sinq/replaytest" / rel / "training_record.json")
        assert rec[RESTORED_KEY]["adapter_weights"] is False
        assert rec["adapter_sha256"] == original["adapter_sha256"]
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["ok"] and all(d is None for _, d in comparison["verdicts"])


@pytest.mark.slow
def test_a_tampered_bundle_is_refused(bundled_run, tmp_path):
    workdir, _, _ = bundled_run
    with tarfile.open(workdir / "results/bundle/roundtrip.tar.gz") as tar:
        tar.extractall(tmp_path / "x", filter="data")
    root = tmp_path / "x/roundtrip"
    rec = next(
        p
        for p in sorted(root.glob("results/sinq/replaytest/round1/bob_untrained/shard*.jsonl"))
        if b"Looking at both" in p.read_bytes()
    )
    data = bytearray(rec.read_bytes())
    data[data.index(b"Looking at both")] = ord("l")  # one byte of one of Bob's recorded answers
    rec.write_bytes(bytes(data))
    rel = rec.relative_to(root).as_posix()
    write_tar_gz(root, "roundtrip", tmp_path / "tampered.tar.gz", 1_700_000_000)
    verify = selfplay_cli("bundle", "verify", str(tmp_path / "tampered.tar.gz"))
    assert verify.returncode == 1
    assert verify.stderr == (
        f"selfplay: bundle check failed: {rel}: sha256 differs from the manifest "
        "(the file was changed after bundling)\n"
    )
    replay = selfplay_cli("bundle", "replay", str(tmp_path / "tampered.tar.gz"), "--out", str(tmp_path / "r"))
    assert replay.returncode == 1 and "sha256 differs" in replay.stderr
    assert not (tmp_path / "r/work").exists()  # refused before anything ran


@pytest.mark.slow
def test_timings(bundled_run, replayed):
    """Not a check: prints the numbers docs/bundle.md quotes (pytest -s)."""
    workdir, _, run_seconds = bundled_run
    _, _, replay_seconds = replayed
    size = (workdir / "results/bundle/roundtrip.tar.gz").stat().st_size
    print(f"\nrun + bundle: {run_seconds:.1f} s; bundle: {size / 1e3:.0f} kB; replay: {replay_seconds:.1f} s")
