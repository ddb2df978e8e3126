#!/usr/bin/env bash
# System packages the tests need beyond the default's (scripts/install_apt.sh): a real
# one-node SLURM cluster for tests/test_slurm.py (Debian's slurm-wlm and munge; the
# tests start and stop their own daemons), GHC for the Haskell track and Dafny for the PSV track.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_apt.sh "the SLURM tests, the Haskell track and the PSV track" \
  slurm-wlm:slurmctld,slurmd,sbatch,squeue,scontrol munge:munged,munge ghc:ghc,runghc dafny:dafny
