"""Pinned container images: the definitions, the registry, and rules running in them.

Apptainer cannot be installed here, so images are never built in tests. What is
tested: every containers/*.def parses and pins everything it installs (the checker
is shown to catch each kind of unpinned line), the registry agrees with the
definitions, the rules name the right images, and with `--sdm apptainer` the
workflow hands each rule's own command to the image (through tests/fakes/apptainer,
a test double that runs the command on the host) and records the image in the
verdicts, which are otherwise the same as on the host.
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from workflow_helpers import REPO, run_snakemake, write_config

from selfplay.containers.deffile import DefFileError, check_pinning, parse_def, read_def
from selfplay.containers.registry import load_images, registry_problems
from selfplay.containers.runtime import current_image, runtime_record
from selfplay.errors import UserError
from selfplay.records import read_jsonl

DEFS = sorted((REPO / "containers").glob("*.def"))
DIGEST = "python:3.11-slim-bookworm@sha256:" + "ab" * 32
GOOD_HEAD = f"""Bootstrap: docker
From: {DIGEST}

%labels
    org.selfplay.image demo
    org.selfplay.version 1.0.0

%environment
    export SELFPLAY_IMAGE=demo
    export SELFPLAY_IMAGE_VERSION=1.0.0
"""


def test_there_is_an_image_for_each_verifier_and_the_gpu_stack():
    assert {p.name for p in DEFS} == {
        "python-sandbox.def",
        "python.def",
        "gpu.def",
        "haskell.def",
        "verus.def",
        "bigcodebench.def",
    }


@pytest.mark.parametrize("path", DEFS, ids=lambda p: p.name)
def test_each_definition_parses_and_pins_everything(path):
    d = read_def(path)
    assert d.header["bootstrap"] == "docker"
    assert "@sha256:" in d.base
    assert {"post", "labels", "environment", "test"} <= set(d.sections)
    assert check_pinning(d, REPO) == []


def test_definitions_pin_the_tool_versions_the_issue_names():
    haskell = read_def(REPO / "containers/haskell.def")
    assert "ghc=9.0.2-4" in haskell.sections["post"] and "liquidhaskell-0.9.0.2.1" in haskell.sections["post"]
    assert "z3=4.8.12-3.1" in haskell.sections["post"]
    verus = read_def(REPO / "containers/verus.def")
    assert "verus-0.2026.09.16.7325eee-x86-linux.zip" in verus.sections["post"]
    assert "--default-toolchain 1.98.1" in verus.sections["post"]
    gpu = (REPO / "containers/requirements-gpu.txt").read_text()
    for pin in ("torch==2.13.0", "vllm==0.31.0", "peft==0.21.2", "trl==1.16.0", "transformers==5.17.0"):
        assert pin in gpu.splitlines()


def test_all_python_images_share_the_hosts_python_minor_version():
    # Snakemake mounts its own (host) package directory into the image for `script:`
    # rules, so the image's Python must be the host's minor version.
    for path in DEFS:
        assert read_def(path).base.startswith(f"python:{sys.version_info[0]}.{sys.version_info[1]}-")


BAD = {
    "tag instead of digest": ("From: " + DIGEST, "From: python:3.11-slim", "not pinned by digest"),
    "latest": ("From: " + DIGEST, "From: python:latest@sha256:" + "ab" * 32, "latest"),
    "unchecked download": (
        "",
        "curl -fsSL -o tool.tgz https://example.org/tool.tgz",
        "not verified by sha256",
    ),
    "unpinned pip": ("", "pip install numpy", "not pinned with =="),
    "range pip": ("", "pip install 'numpy>=1.0'", "not pinned with =="),
    "unpinned apt": ("", "apt-get install -y --no-install-recommends ghc", "apt package not pinned"),
    "cabal without index": ("", "cabal install --lib liquidhaskell-0.9.0.2.1", "--index-state"),
    "cabal unversioned": (
        "",
        "cabal install --index-state=2023-06-01T00:00:00Z liquidhaskell",
        "without an exact version",
    ),
    "moving toolchain": ("", "./rustup-init -y --default-toolchain stable", "not an exact version"),
    "wrong env": ("export SELFPLAY_IMAGE_VERSION=1.0.0", "export SELFPLAY_IMAGE_VERSION=2.0.0", "differs"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_pinning_check_catches(case):
    old, new, expected = BAD[case]
    text = GOOD_HEAD + "\n%post\n    set -eu\n"
    if old:
        text = text.replace(old, new)
    else:
        text += "    " + new + "\n"
    problems = check_pinning(parse_def(text))
    assert any(expected in p for p in problems), problems


def test_a_checked_download_and_pinned_installs_pass():
    text = (
        GOOD_HEAD
        + """
%%post
    set -eu
    apt-get install -y --no-install-recommends ghc=9.0.2-4 z3=4.8.12-3.1
    curl -fsSL -o tool.tgz \\
        https://example.org/tool.tgz
    echo "%s  tool.tgz" | sha256sum -c -
    pip install --no-cache-dir numpy==2.0.0
"""
        % ("cd" * 32)
    )
    assert check_pinning(parse_def(text)) == []


def test_a_requirements_file_is_checked_line_by_line(tmp_path):
    (tmp_path / "req.txt").write_text("# comment\nnumpy==2.0.0\npandas\n")
    text = GOOD_HEAD + "\n%files\n    req.txt /opt/req.txt\n\n%post\n    pip install -r /opt/req.txt\n"
    problems = check_pinning(parse_def(text), tmp_path)
    assert problems == ["/opt/req.txt: requirement not pinned with ==: pandas"]
    text = GOOD_HEAD + "\n%post\n    pip install -r /opt/elsewhere.txt\n"
    assert "not copied in by %files" in check_pinning(parse_def(text), tmp_path)[0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("From: x\n", "no 'Bootstrap:' header"),
        ("Bootstrap: docker\n", "no 'From:' header"),
        ("Bootstrap: docker\nFrom: x\n%bogus\n", "unknown section %bogus"),
        ("Bootstrap: docker\nFrom: x\n%post\n%post\n", "appears twice"),
        ("Bootstrap docker\n", "is not 'Key: value'"),
    ],
)
def test_malformed_definitions_get_one_clear_error(text, message):
    with pytest.raises(DefFileError, match=message):
        parse_def(text, "x.def")


def test_the_registry_agrees_with_the_definitions():
    assert registry_problems(REPO) == []
    images = load_images(REPO)
    assert set(images) == {"sandbox", "python", "gpu", "haskell", "verus", "bigcodebench"}
    for image in images.values():
        assert image.ref.startswith("oras://") and image.ref.endswith(":" + image.version)


def test_registry_disagreements_are_found(tmp_path):
    (tmp_path / "containers").mkdir()
    for p in DEFS:
        (tmp_path / "containers" / p.name).write_text(p.read_text())
    text = (REPO / "containers/images.yaml").read_text().replace("selfplay-gpu:0.1.2", "selfplay-gpu:0.2.0")
    (tmp_path / "containers/images.yaml").write_text(text)
    (tmp_path / "containers/extra.def").write_text(GOOD_HEAD)
    problems = registry_problems(tmp_path)
    assert any("gpu" in p and "tag 0.2.0" in p for p in problems), problems
    assert "containers/extra.def is not in containers/images.yaml" in problems


def test_config_overrides_and_bad_overrides():
    images = load_images(REPO, {"sandbox": "/images/sandbox.sif"})
    assert images["sandbox"].ref == "/images/sandbox.sif" and images["sandbox"].overridden
    assert not images["gpu"].overridden
    with pytest.raises(UserError, match="no such image"):
        load_images(REPO, {"sandbx": "/x.sif"})
    with pytest.raises(UserError, match="neither"):
        load_images(REPO, {"gpu": "ghcr.io/x/y:1"})


def test_runtime_record_says_host_or_image(monkeypatch):
    for var in ("APPTAINER_CONTAINER", "SINGULARITY_CONTAINER", "SELFPLAY_IMAGE", "SELFPLAY_IMAGE_VERSION"):
        monkeypatch.delenv(var, raising=False)
    assert current_image() is None
    assert runtime_record()["image"] == "host"
    assert runtime_record()["tools"]["python"] == ".".join(map(str, sys.version_info[:3]))
    monkeypatch.setenv("APPTAINER_CONTAINER", "/x/sandbox.sif")
    monkeypatch.setenv("SELFPLAY_IMAGE", "selfplay-sandbox")
    monkeypatch.setenv("SELFPLAY_IMAGE_VERSION", "0.1.0")
    assert runtime_record()["image"] == {
        "name": "selfplay-sandbox",
        "version": "0.1.0",
        "file": "/x/sandbox.sif",
    }


def test_the_cli_checks_all_definitions():
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "selfplay", "containers", "check"], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert "6 definitions pinned" in proc.stdout


# ------------------------------------------------------------- the workflow in images
RULE_IMAGES = {
    "sinq_alice_generate": "gpu",
    "sinq_bob_generate": "gpu",
    "sinq_verify": "sandbox",
    "sinq_label": "sandbox",
}
TARGETS = [f"results/sinq/replaytest/round1/labeled_untrained/shard{s}.jsonl" for s in (0, 1)]


def _scenario(workdir):
    from test_workflow_replay import build_scenario

    cfg = build_scenario(workdir)
    cfg["model"]["path"] = "unused-with-replay"
    return cfg


VOLATILE = {"runtime", "label_runtime", "seconds", "isolation"}  # where and how fast, not what


def _strip_runtime(obj):
    """The verdicts without the fields that differ between any two runs (timings, the
    sandbox uid a check happened to lease) or between host and image (runtime)."""
    if isinstance(obj, dict):
        return {k: _strip_runtime(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_strip_runtime(v) for v in obj]
    return obj


@pytest.mark.slow
def test_rules_run_their_own_commands_in_their_images(tmp_path, monkeypatch):
    host, boxed = tmp_path / "host", tmp_path / "boxed"
    write_config(host, _scenario(host))
    run_snakemake(host, *TARGETS)

    cfg = _scenario(boxed)
    local_sif = boxed / "images" / "my-sandbox.sif"  # a site's own build of the sandbox image
    local_sif.parent.mkdir(parents=True)
    local_sif.write_text("a local image file\n")
    cfg["containers"] = {"sandbox": str(local_sif)}
    write_config(boxed, cfg)
    calls = boxed / "apptainer-calls.jsonl"
    fake_bin = REPO / "tests" / "fakes"
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_APPTAINER_LOG", str(calls))
    monkeypatch.setenv("FAKE_APPTAINER_PYTHON", sys.executable)
    monkeypatch.setenv("FAKE_APPTAINER_IMAGES", json.dumps({str(local_sif): "containers/python-sandbox.def"}))
    run_snakemake(
        boxed,
        "--sdm",
        "apptainer",
        "--apptainer-args=--nv",
        "--apptainer-prefix",
        str(boxed / "sif-cache"),
        *TARGETS,
    )

    log = read_jsonl(calls)
    images = load_images(REPO)
    pulls = sorted(c["url"] for c in log if c["action"] == "pull")
    # Snakemake pulls the image of every rule in the DAG, also of the sources rule whose output
    # the scenario wrote itself; the sandbox image is the local file: not pulled.
    assert pulls == sorted([images["gpu"].ref, images["python"].ref])
    execs = [c for c in log if c["action"] == "exec"]
    by_rule: dict[str, set[str]] = {}
    for call in execs:
        script = call["command"][-1]
        rule = re.search(r"\.(\w+)\.py$", script).group(1)
        by_rule.setdefault(rule, set()).add(call["image"])
        assert call["nv"] is True  # apptainer-args reach the call
        # The command in the image is the rule's own script, run by `python` as on the host,
        # and the checkout's package is mounted so that the script imports the same code.
        assert call["command"][0] in ("sh", "bash") and call["command"][1] == "-c"
        assert re.search(rf"(^|; *)python \S+/\.snakemake/scripts/tmp\w+\.{rule}\.py$", script), script
        assert any(b.startswith(f"{REPO / 'src'}:") for b in call["bind"]), call["bind"]
    expected = {"gpu": images["gpu"].ref, "python": images["python"].ref, "sandbox": str(local_sif.resolve())}
    assert by_rule == {rule: {expected[img]} for rule, img in RULE_IMAGES.items()}
    assert len(execs) == 8  # 2 shards x 4 rules

    for s in (0, 1):
        cands = read_jsonl(boxed / f"results/sinq/replaytest/round1/candidates/shard{s}.jsonl")
        host_cands = read_jsonl(host / f"results/sinq/replaytest/round1/candidates/shard{s}.jsonl")
        assert _strip_runtime(cands) == _strip_runtime(
            host_cands
        )  # same verdicts in the image as on the host
        assert all(c["runtime"]["image"]["name"] == "selfplay-sandbox" for c in cands)
        assert all(c["runtime"]["image"]["version"] == "0.1.0" for c in cands)
        assert all(c["runtime"]["image"]["file"] == str(local_sif.resolve()) for c in cands)
        assert all(c["runtime"]["image"] == "host" for c in host_cands)
        labeled = read_jsonl(boxed / f"results/sinq/replaytest/round1/labeled_untrained/shard{s}.jsonl")
        host_labeled = read_jsonl(host / f"results/sinq/replaytest/round1/labeled_untrained/shard{s}.jsonl")
        assert _strip_runtime(labeled) == _strip_runtime(host_labeled)
        assert all(x["label_runtime"]["image"]["name"] == "selfplay-sandbox" for x in labeled)
    assert (
        sum(
            len(read_jsonl(boxed / f"results/sinq/replaytest/round1/candidates/shard{s}.jsonl"))
            for s in (0, 1)
        )
        > 0
    )


def image_packages(name: str) -> set[str]:
    """The Python packages an image's definition pip-installs from its requirements files."""
    d = read_def(REPO / load_images(REPO)[name].definition)
    files = re.findall(r"-r /opt/selfplay/(requirements-[\w-]+\.txt)", d.sections["post"])
    lines = [line for f in files for line in (REPO / "containers" / f).read_text().splitlines()]
    return {
        line.split("==")[0].strip().lower() for line in lines if "==" in line and not line.startswith("#")
    }


def test_parquet_readers_run_in_images_that_have_pandas_and_pyarrow():
    """MultiPL-E's items (paper 000's Table 3) and the published Haskell set are parquet files
    read with pandas. The items were prepared in the haskell image, which had no pandas:
    under --sdm apptainer the table never got its items."""
    import subprocess

    assert {"pandas", "pyarrow"} <= image_packages("python")
    assert {"pandas", "pyarrow"} <= image_packages("haskell")  # seq_hsx_sources checks with GHC there
    out = subprocess.run(
        [
            str(REPO / ".venv/bin/snakemake"),
            "-n",
            "resources/data/eval/humaneval_hs.jsonl",
            "resources/data/eval/mbpp_hs.jsonl",
            "--configfile",
            "config/papers/seq.yaml",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    jobs = dict(re.findall(r"^(eval_items_\w+)\s+(\d+)$", out.stdout, re.M))
    assert jobs == {"eval_items_python": "2"}, out.stdout[-2000:]
    rules = (REPO / "rules/evaluate.smk").read_text()
    assert re.search(r"for _image, _benches in EVAL_ITEM_IMAGES\.items\(\):.*?image\(_image\)", rules, re.S)
