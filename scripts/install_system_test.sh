#!/usr/bin/env bash
# System packages the SLURM tests need (tests/test_slurm.py): a real one-node cluster
# made of Debian's slurm-wlm (slurmctld, slurmd, sbatch, ...) and munge.
#   - everything there already: says so and does nothing (idempotent, quick);
#   - root: apt-get update && apt-get install -y slurm-wlm munge (quietly, ~20 s);
#   - not root: says what is missing and exits 0; the SLURM tests then skip with a
#     message naming the missing piece.
# No daemon is started here: tests start and stop their own cluster
# (python -m selfplay.cluster.local_slurm start|stop|status).
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
missing=()
for tool in slurmctld slurmd sbatch squeue scontrol munged munge; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "SLURM test packages ready (slurm-wlm, munge)"
  exit 0
fi

if [ "${EUID:-$(id -u)}" -ne 0 ]; then
  echo "note: ${missing[*]} not found and not root: install the Debian packages slurm-wlm and munge" \
       "(sudo apt-get install -y slurm-wlm munge) to run the SLURM tests; they will be skipped"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: ${missing[*]} not found and there is no apt-get: install SLURM (slurmctld, slurmd, clients)" \
       "and munge with this system's package manager to run the SLURM tests; they will be skipped"
  exit 0
fi

echo "Installing slurm-wlm and munge for the SLURM tests (apt-get) ..."
log="$(mktemp)"
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq slurm-wlm munge >>"$log" 2>&1; then
  rm -f "$log"
  echo "SLURM test packages ready (slurm-wlm, munge)"
else
  echo "warning: apt-get could not install slurm-wlm and munge (log: $log); the SLURM tests will be skipped:" >&2
  tail -n 5 "$log" >&2
fi
exit 0
