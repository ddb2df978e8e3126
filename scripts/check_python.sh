# Sourced by the install scripts: sets PY to a Python 3.11+ that has the venv module, or exits.
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: Python 3.11 or newer is needed (found: $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if ! "$PY" -m venv --help >/dev/null 2>&1; then
  echo "error: the Python venv module is missing: apt-get install python3-venv" >&2
  exit 1
fi
