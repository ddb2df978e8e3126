#!/usr/bin/env bash
# Install Debian packages the project needs when their tools are missing.
#   scripts/install_apt.sh "WHAT THEY ARE FOR" package:tool[,tool...] ...
#   - every tool there already: says so and does nothing (idempotent, quick);
#   - root with apt-get: apt-get update && apt-get install -y the missing packages;
#   - otherwise: says what is missing and exits 0, so what needs them skips or
#     fails with a message naming the package.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
purpose="$1"; shift
packages=()
for spec in "$@"; do
  pkg="${spec%%:*}"
  IFS=, read -r -a tools <<<"${spec#*:}"
  for tool in "${tools[@]}"; do
    if ! command -v "$tool" >/dev/null 2>&1; then packages+=("$pkg"); break; fi
  done
done
if [ "${#packages[@]}" -eq 0 ]; then
  echo "System packages for $purpose ready"
  exit 0
fi
if [ "${EUID:-$(id -u)}" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: ${packages[*]} missing (for $purpose); install them (sudo apt-get install -y ${packages[*]})"
  exit 0
fi
echo "Installing ${packages[*]} for $purpose (apt-get) ..."
log="$(mktemp)"
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq "${packages[@]}" >>"$log" 2>&1; then
  rm -f "$log"
  echo "System packages for $purpose ready (${packages[*]})"
else
  echo "warning: apt-get could not install ${packages[*]} (log: $log):" >&2
  tail -n 5 "$log" >&2
fi
exit 0
