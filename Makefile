# The front door. `make run` installs and runs the embedded default end to end;
# `make test` installs the test tools and runs the test suite (CI runs exactly that).
SHELL := /bin/bash
VENV := .venv/bin
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test test-fast lint rehearse install install-test report bench clean-results

install:
	scripts/install.sh default
	scripts/install_apt.sh "the Haskell track (GHC) and the PSV track (Dafny)" ghc:ghc,runghc dafny:dafny

install-test:
	scripts/install.sh test
	scripts/install_system_test.sh
	scripts/install_vllm.sh

# SELFPLAY_WARM=1: jobs fork from a process that has imported torch and transformers once
# (src/selfplay/pipeline/warm_start.py), instead of importing them ~100 times.
run: install
	SELFPLAY_WARM=1 $(VENV)/snakemake --profile profiles/local

# The dress rehearsals of the paper configs (tests marked `rehearsal`, docs/rehearsals.md)
# take about an hour together on 2 cores, past what CI allows beside the rest: `make rehearse`.
test: install-test
	$(VENV)/python -m pytest -ra --durations=40 -n 2 --dist loadscope --no-loadscope-reorder -m "not rehearsal"

# The edit loop: what is installed already, without the real model's workflows, the SLURM
# cluster and the rehearsals (markers in pyproject.toml), then ruff. `make test` stays what CI runs.
test-fast:
	$(VENV)/python -m pytest -q -x -m "not slow and not rehearsal and not cluster"

# Fix what the style tests report: lint fixes and formatting (tests/test_code_style.py).
lint:
	$(VENV)/ruff check --fix .
	$(VENV)/ruff format .
	$(VENV)/snakefmt Snakefile rules/

rehearse: install-test
	$(VENV)/python -m pytest -ra -s -m rehearsal

report: install
	$(VENV)/snakemake --profile profiles/local --report results/report.html

bench: install-test
	$(VENV)/python bench/sandbox_bench.py
	$(VENV)/python bench/generation_bench.py
	$(VENV)/python bench/lora_merge_bench.py
	$(VENV)/python bench/dtype_bench.py
	$(VENV)/python bench/ghc_bench.py
	$(VENV)/python bench/format_bench.py
	$(VENV)/python bench/dafny_bench.py
	$(VENV)/python bench/pass_matrix_bench.py
	$(VENV)/python bench/gasp_passrate.py
	$(VENV)/python bench/template_bench.py
	$(VENV)/python bench/harness_agreement.py --problems 6
	$(VENV)/python bench/harness_agreement_bcb.py
	$(VENV)/python bench/grpo_step_bench.py
	$(VENV)/python bench/default_run.py

clean-results:
	rm -rf results logs benchmarks .snakemake
