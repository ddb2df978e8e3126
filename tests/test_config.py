"""Config validation: the shipped configs pass; a bad value fails naming its key."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from selfplay.config import validate_config
from selfplay.errors import UserError

REPO = Path(__file__).resolve().parents[1]


def load(path):
    return yaml.safe_load((REPO / path).read_text())


@pytest.mark.parametrize("path", ["config.yaml", "config/papers/sinq.yaml"])
def test_shipped_configs_are_valid(path):
    validate_config(load(path))


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda c: c["sinq"]["bob"].__setitem__("samples", 0), "sinq.bob.samples"),
        (lambda c: c["sinq"]["alice"]["sampling"].__setitem__("top_p", 1.5), "sinq.alice.sampling.top_p"),
        (lambda c: c["sinq"].__setitem__("roundz", 3), "sinq"),
        (lambda c: c["backend"].__setitem__("name", "magic"), "backend.name"),
        (lambda c: c["sinq"]["sources"].__setitem__("dataset", "apps"), "sinq.sources.dataset"),
        (lambda c: c.__setitem__("backend", {"name": "replay"}), "backend.files"),
        (lambda c: c["model"].__setitem__("source", "hf"), "model.path"),
    ],
)
def test_bad_values_name_their_key(mutate, key):
    cfg = copy.deepcopy(load("config.yaml"))
    mutate(cfg)
    with pytest.raises(UserError) as err:
        validate_config(cfg)
    assert f"config key {key}" in str(err.value)


def test_paper_config_holds_the_papers_numbers():
    c = load("config/papers/sinq.yaml")["sinq"]
    assert c["sources"]["dataset"] == "mbpp"
    assert c["bob"]["samples"] == 10
    assert c["alice"]["sampling"]["temperature"] == 1.0 and c["alice"]["sampling"]["top_p"] == 0.7
    assert c["target_difficulty"] == 10
    assert c["curriculum"] == {"hard_threshold": 5, "easy_fraction": 0.2, "difficulty_easy_fraction": 0.5}
    assert c["rounds"] == 7
    assert (c["verify"]["timeout_min"], c["verify"]["timeout_max"]) == (2.5, 5.5)


def test_snakemake_rejects_a_bad_config_with_one_line(tmp_path):
    bad = load("config.yaml")
    bad["sinq"]["rounds"] = 0
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump(bad))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "Configuration error: config key sinq.rounds" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_the_sinq_track_refuses_a_time_limit_range_that_runs_backwards():
    # a game's own rule lives in its track's settings check, not in the shared config layer
    from selfplay.config import prepare_config
    from selfplay.tracks.sinq import settings as sinq_settings

    cfg = copy.deepcopy(load("config.yaml"))
    cfg["sinq"]["verify"]["timeout_min"] = 9.0
    validate_config(copy.deepcopy(cfg))  # the shared layer knows nothing of it
    with pytest.raises(UserError, match="config key sinq.verify.timeout_min"):
        sinq_settings.check(validate_config(cfg))
    with pytest.raises(UserError, match="config key sinq.verify.timeout_min"):
        prepare_config(cfg, "resources/models/not-needed")
