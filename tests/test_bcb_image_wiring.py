"""BigCodeBench runs in its own image, pinned as the official environment is: the
definition installs BigCodeBench's requirements-eval pins (deviations named in the
file), and the rules put both BigCodeBench benchmarks, and only them, in that image."""

from __future__ import annotations

import re
from pathlib import Path

from selfplay.containers.deffile import check_pinning, read_def

REPO = Path(__file__).resolve().parents[1]


def test_the_image_holds_bigcodebenchs_pins():
    d = read_def(REPO / "containers/bigcodebench.def")
    assert check_pinning(d, REPO) == []
    assert "-r /opt/selfplay/requirements-bigcodebench.txt" in d.sections["post"]
    pins = dict(
        line.split("==")
        for line in (REPO / "containers/requirements-bigcodebench.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert len(pins) >= 70
    # upstream's pins, kept where this Python has a build of them
    for name, version in (
        ("pandas", "2.0.3"),
        ("scikit-learn", "1.3.1"),
        ("librosa", "0.10.1"),
        ("nltk", "3.8"),
        ("geopandas", "0.13.2"),
        ("matplotlib", "3.7.0"),
        ("statsmodels", "0.14.0"),
    ):
        assert pins[name] == version
    # every deviation says what upstream pins
    text = (REPO / "containers/requirements-bigcodebench.txt").read_text()
    for name in ("numpy", "scipy", "numba", "scikit-image", "tensorflow", "keras"):
        assert re.search(rf"# upstream: {name}==", text), name


def test_rules_score_bigcodebench_in_its_image():
    common = (REPO / "rules/common.smk").read_text()
    assert '"bigcodebench": "|".join(BIGCODEBENCH_BENCHES)' in common
    assert "b not in HASKELL_BENCHES + BIGCODEBENCH_BENCHES" in common
    images = (REPO / "containers/images.yaml").read_text()
    assert "def: containers/bigcodebench.def" in images
