"""``make evidence``: the judge artefacts at the sizes that decide the papers' claims.

Runs the evidence notebooks at the evidence sizes, one after another, each in stages of growing
size (a stage is a notebook run whose parameters are given below; its questions are a seeded
random sample that grows by extension, so a later stage reuses every item of the earlier ones).
Each stage writes the artefact's table, so an interrupted run leaves the tables of its last
finished stage; a stage that scores part of an artefact's datasets (lk_t02's every-candidate
stages, one dataset each) writes its tables beside it, under ``results/evidence/parts/``. The
claims' artefacts run their stages in rounds (every claim's first stage, then every claim's
second, ...), so each claim gets a first verdict before any of them grows;
the DebateQA analyses and the LINKAGE ablations follow. Each stage is logged in
``results/evidence/stages.csv`` when it first starts (the store's items and seconds then) and
when it finishes (wall seconds of the run that finished it; items computed and their seconds
since its first start, so a stage that spans several killed and resumed runs counts all of them;
machine, commit): the run's real cost, the stages a rerun skips, and the rates from which the
driver projects, before it starts, what each remaining stage will take (the larger of the wall
and item seconds per question of the artefact's last logged stage times the questions the stage
adds; a stage of an artefact with none logged yet is listed as not projected). A notebook's own
defaults are the size of its committed tables, which ``make reproduce`` rebuilds from the store
in minutes. Every model output goes to the committed item store as it is computed
(:mod:`nfeval_repro.store`), so the run is resumable item by item: kill it, start it again, and
nothing stored is recomputed. Each notebook streams its progress bars (with their ETA) to the
terminal; before each one the driver prints what the store already holds.

    python -m nfeval_repro.evidence                 # every evidence artefact, in order
    python -m nfeval_repro.evidence lk_t02 dq_t03   # some of them
    python -m nfeval_repro.evidence --list          # the plan, its order and projected cost
    python -m nfeval_repro.evidence lk_t05 --set judge=smollm2-135m-instruct   # other parameters, not logged

Ctrl-C ends the run within seconds: the notebook's kernel runs in a session of its own (so a
terminal's SIGINT never reaches it), and the driver ends it and every process under it, keeps
every finished item (each is on disk once computed; a line cut short is ignored when read),
says how to resume and exits with status 130.

What the whole plan costs on this machine (projected from a small probe), and how far
items recomputed here are from the committed ones, are :mod:`nfeval_repro.evidence_cost`'s
(``python -m nfeval_repro.evidence_cost --measure DIR`` / ``--agree DIR``).

``NFEVAL_STORE=<folder>`` with ``NFEVAL_STORE_READ=own`` recomputes every item into that folder
instead of reading the committed ones (a full rerun on another machine, to compare);
``NFEVAL_STORE_READ=texts`` recomputes every number but reads the committed generated texts.

Why this file is long: the plan (its stages and their order), the stage log and the
projection it allows, the store check that decides a logged stage is still done, and the
interruptible driver are one program a user runs for hours; split, each part would import
the others.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nfeval_repro.paths import NOTEBOOKS, RESULTS, ROOT
from nfeval_repro.profiles import PROFILES
from nfeval_repro.store import display_path
from nfeval.models.registry import DEFAULT_JUDGE

#: The judge of every LINKAGE judge row and every D.A. / judge-metric row of the evidence run.
JUDGE = DEFAULT_JUDGE
_J = {"judge": JUDGE}
#: lk_t03 / lk_t04: references written by the judge's own model, as the paper does.
_GEN = {**_J, "generator": f"llama:{JUDGE}", "degraders": f"llama:{JUDGE}", "max_candidates": -1}
#: dq_t02's P.D. backbones: the judge's model (D1's same-backbone comparison), then SmolLM2-135M.
_PD2 = f"{JUDGE},smollm2-135m-instruct"
#: dq_f03's backbones with the judge's model (section 1's same-backbone P.D.) as the fourth.
_F03_BACKBONES = f"smollm2-135m-instruct,gemma3-270m,qwen2.5-coder-0.5b-instruct,{JUDGE}"
#: D3's five answering systems (the paper's five LLMs): the embedded profile's stability systems.
_FIVE = ",".join(PROFILES["embedded"].stability_systems)
#: The ablations: lk_t02's first judged questions and its 8 candidates (its judgments reused).
_ABL = {**_J, "limit": 30, "max_candidates": -1}

#: lk_t02's every-candidate stages: the claim-deciding judge rows (LINKAGE 0-shot and
#: few-shot, pointwise with and without references, pairwise with the candidate first as the
#: release runs it) on every candidate of the judged questions, one dataset at a time; the
#: small judge and the sampled decoding stay on the 8-candidate stages. The judge runs in
#: bfloat16 there, every row alike: results/bench.csv's judge_path has it at 3.3-4.1x float32
#: on a CPU with AMX (its judge_table: lk_t02's rows within 0.009 of float32's), at 2.1-2.4x
#: on an AMD EPYC with avx512_bf16 alone (its judge_table: LINKAGE rows within 0.018), 0.62x
#: on a CPU of that kind whose model was not recorded; measure it on yours (`make bench`).
#: The refppl row (beyond the paper; about 3 h of CPU on TREC-DL-NF's every candidate) waits
#: for the judge rows: these stages leave it out (``refppl_lm`` none), and a stage on both
#: datasets (53 TREC-DL-NF and 120 ANTIQUE questions, every judge row read from the store) adds
#: it and writes the two-dataset table; after 240 ANTIQUE questions, the same on both datasets
#: (:data:`_EVERY_BOTH`: the committed table, the notebook's defaults).
EVERY_ROWS = "linkage-0shot,pointwise-ref,pointwise-noref,linkage-fewshot,pairwise-release"
_EVERY = {"max_candidates": 0, "judge_rows": EVERY_ROWS, "small_judge": "", "sample_limit": 0,
          "judge_dtype": "bfloat16", "refppl_lm": "none"}
_EVERY_BOTH_120 = {"limit": 120, **{k: v for k, v in _EVERY.items() if k != "refppl_lm"}}
_EVERY_BOTH = {**_EVERY_BOTH_120, "limit": 240}
#: lk_t02's first stages: 8 candidates per question drawn at random, the five rows of
#: same_items.DEFAULT_JUDGE_ROWS (pairwise with a seeded coin) in float32, the small judge
#: (Qwen2.5-Coder-0.5B) on the same items and both decodings on 10 questions per dataset.
#: The notebook's defaults are the every-candidate table (:data:`_EVERY_BOTH`), so these
#: stages name every parameter that differs.
_EIGHT = {"max_candidates": 8, "small_judge": "qwen2.5-coder-0.5b-instruct", "sample_limit": 10,
          "judge_rows": "pointwise-noref,pointwise-ref,pairwise,linkage-0shot,linkage-fewshot",
          "judge_dtype": "float32"}
#: lk_t03 / lk_t04's every-candidate stages: every candidate, in lk_t02's every-candidate dtype.
_EVERY_GEN = {"max_candidates": 0, "judge_dtype": _EVERY["judge_dtype"]}
#: 1GT's claim-deciding generated-list rows: pairwise as the release runs it, not the coin.
_ROWS_1GT = "pointwise-ref,pairwise-release,linkage-0shot,linkage-fewshot"
#: lk_t03's 8-candidate stages: 1GT's own rows (pairwise with a seeded coin), in float32.
_EIGHT_1GT = {"judge_rows": "pointwise-ref,pairwise,linkage-0shot,linkage-fewshot",
              "judge_dtype": "float32"}
#: Mean candidates per judged question when every candidate is judged (lk_t02's draw, seed 0:
#: 5,273 candidates of the 53 TREC-DL-NF questions, 2,379 of the first 120 ANTIQUE ones),
#: against the 8-candidate stages' 8: what the projection scales an 8-candidate stage's rate by.
CANDIDATES = {"antique": 19.8, "trec-dl-nf": 99.5}

#: The DebateQA system artefacts' stages: 16 sample questions, then all 40.
_SAMPLE_16_40 = ({"limit": 16}, {"limit": 40})

#: lk_x05's judges below lk_t02's 1.5B one, smallest first.
_SMALL_JUDGES = "smollm2-135m-instruct,gemma3-270m,qwen2.5-coder-0.5b-instruct"

#: Both LINKAGE datasets, as a notebook's ``datasets`` parameter.
_BOTH = "antique,trec-dl-nf"

#: Parameter stages of each artefact (default: one run at the notebook's defaults).
STAGES: dict[str, tuple[dict, ...]] = {
    # the 1.5B judge's five rows: ANTIQUE grows 30 -> 60 -> 120 questions (TREC-DL-NF: its 53
    # judgeable questions are reached at the second stage; most of their items are stored);
    # then every candidate: TREC-DL-NF's 53 questions (about 100 candidates each: the largest
    # gain per item), ANTIQUE's 120, then both with the refppl row (the two-dataset table),
    # then 240 ANTIQUE questions, then both with the refppl row again (the committed table),
    # then every judgeable ANTIQUE question (345; its part table, beside the committed one),
    # then both datasets at every judgeable question with the refppl row (the table to commit
    # once the notebook's default limit is 0; its dtype check stays at 240 questions)
    "lk_t02": ({"limit": 30, **_EIGHT}, {"limit": 60, **_EIGHT}, {"limit": 120, **_EIGHT},
               {"limit": 0, "datasets": "trec-dl-nf", **_EVERY},
               {"limit": 120, "datasets": "antique", **_EVERY},
               _EVERY_BOTH_120,
               {"limit": 240, "datasets": "antique", **_EVERY},
               _EVERY_BOTH,
               {"limit": 0, "datasets": "antique", **_EVERY},
               {**_EVERY_BOTH, "limit": 0}),
    "lk_t05": ({"limit": 40, **_J}, {"limit": 0, **_J}),
    # then every candidate of the same 40 questions per dataset, TREC-DL-NF first, in bf16
    # (the lk_t02 rows they show beside, judged with human references, are lk_t02's
    # every-candidate items); 1GT's pairwise baseline as the release runs it (candidate first).
    # Its registry parameters are the last stage (both datasets, read from the store the two
    # before it filled); the 8-candidate stages name their rows and their float32
    "lk_t03": ({"limit": 20, **_GEN, **_EIGHT_1GT}, {"limit": 40, **_GEN, **_EIGHT_1GT},
               {"limit": 40, **_GEN, **_EVERY_GEN, "judge_rows": _ROWS_1GT,
                "datasets": "trec-dl-nf"},
               {"limit": 40, **_GEN, **_EVERY_GEN, "judge_rows": _ROWS_1GT,
                "datasets": "antique"},
               {"limit": 40, **_GEN, **_EVERY_GEN, "judge_rows": _ROWS_1GT}),
    # lk_t04: its registry parameters are the last stage (every candidate, both datasets, read
    # from the store the two before it filled); the 8-candidate stages name their float32
    "lk_t04": ({"limit": 20, **_GEN, "judge_dtype": "float32"},
               {"limit": 40, **_GEN, "judge_dtype": "float32"},
               {"limit": 40, **_GEN, **_EVERY_GEN, "datasets": "trec-dl-nf"},
               {"limit": 40, **_GEN, **_EVERY_GEN, "datasets": "antique"},
               {"limit": 40, **_GEN, **_EVERY_GEN}),
    # the judge's metrics (40 questions, then all); then P.D. on the judge's own backbone (the
    # paper's same-backbone comparison) beside SmolLM2-135M's, 40 questions, then all
    "dq_t02": ({"limit": 40, **_J}, {"limit": 0, "judge_limit": 0, **_J},
               {"limit": 0, "judge_limit": 0, "pd_judge_limit": 40, "backbone": _PD2, **_J},
               {"limit": 0, "judge_limit": 0, "pd_judge_limit": 0, "backbone": _PD2, **_J}),
    # D.A. with both judges; then the 1.5B judge's D.A.-ZS (the paper's second Table 3 claim)
    "dq_t03": ({}, {"later_methods": "da_prob,da_zs_prob"}),
    "dq_t04": _SAMPLE_16_40,
    # D3 (the paper's "highly consistent" rankings) on all 40 sample questions: the three small
    # backbones and the five restate prompts, then the 1.5B judge's model as a fourth backbone;
    # then five answering systems (the 1.5B model's answers, greedy and sampled, added)
    "dq_f03": ({"limit": 16}, {"limit": 40}, {"limit": 40, "backbones": _F03_BACKBONES},
               {"limit": 40, "backbones": _F03_BACKBONES, "generators": _FIVE}),
    "dq_f04": ({"limit": 16}, {"limit": 40}, {"limit": 40, "generators": _FIVE}),
    "dq_f05": _SAMPLE_16_40,
    "dq_t05": _SAMPLE_16_40,
    "dq_t06": _SAMPLE_16_40,
    "dq_t07": _SAMPLE_16_40,
    "dq_f08_f09": _SAMPLE_16_40,
    "dq_f10": _SAMPLE_16_40,
    "lk_t06": (_ABL,),
    "lk_t07_t08": (_ABL,),
    "lk_t09_t10_f02": (_ABL,),
    # every judge row with the three guards (the notebook's defaults, bf16): 4 ANTIQUE
    # questions, then TREC-DL-NF's too, then 10 questions per dataset and D.A. / P.D. on all
    # 40 sample questions
    # the 0.5B judge beside lk_t02's 1.5B one: TREC-DL-NF grows 5 -> 10 questions; then
    # SmolLM2-135M and Gemma-3-270m on the same questions (the 0.5B judge's items read;
    # SmolLM2's 11,131 items took 1,776 s in bfloat16 on 2 cores of a CPU with AMX, Gemma's
    # 11,131 5,852 s)
    "lk_x05": ({"trec_limit": 5}, {"trec_limit": 10},
               {"trec_limit": 10, "judges": _SMALL_JUDGES}),
    "lk_x03": ({"limit": 4, "datasets": "antique"}, {"limit": 4, "datasets": _BOTH},
               {"limit": 10, "datasets": _BOTH, "dq_limit": 40}),
}

#: (artefact, what its evidence run computes), in the order they run: the claims' tables
#: first (L1-L2, L3, D1), then the DebateQA analyses, then the LINKAGE ablations.
PLAN: tuple[tuple[str, str], ...] = (
    ("lk_t02", "LINKAGE Table 2: the 1.5B judge's 5 rows + refppl on all 53 TREC-DL-NF and 120 "
               "ANTIQUE questions x 8 candidates, in stages of 30/60/120 questions per dataset; "
               "the 0.5B judge's rows on the same items and both decodings on 10+10 questions "
               "(stored); then the claim-deciding rows (LINKAGE 0-shot and few-shot, pointwise "
               "with and without references, pairwise with the candidate first) on every "
               "candidate: TREC-DL-NF's 53 questions, then 120 ANTIQUE ones, then the refppl "
               "row on both, then 240 ANTIQUE questions and the refppl row on them (the "
               "committed table: 240 ANTIQUE and 53 TREC-DL-NF questions), then all 345 "
               "judgeable ANTIQUE questions"),
    ("lk_t05", "LINKAGE Table 5: the 1.5B judge's rows on all 100 WebGLM questions (40, then 100)"),
    ("lk_t03", "LINKAGE Table 3 (1GT): references written by the 1.5B model, its judge rows, 40 "
               "questions per dataset x 8 candidates (20, then 40); then every candidate of "
               "the same questions with pairwise as the release runs it (TREC-DL-NF, then "
               "ANTIQUE, then the two-dataset table from the store)"),
    ("lk_t04", "LINKAGE Table 4 (0GT): as lk_t03 with references from the question alone"),
    ("dq_t02", "DebateQA Table 2: the 1.5B judge's metrics on every usable ANTIQUE and "
               "TREC-DL-NF question (40, then all); then P.D. with the 1.5B model as backbone "
               "(the paper's same-backbone comparison), 40 questions, then all"),
    ("dq_t03", "DebateQA Table 3: D.A. on all 160 labelled answers, both embedded judges"),
    ("dq_t04", "DebateQA Table 4: answers and scores (P.D. two backbones, D.A. two judges) of "
               "16 sample questions, then all 40"),
    ("dq_f03", "DebateQA Figure 3: P.D. with three backbones (16, then all 40 sample questions), "
               "then the 1.5B model as a fourth; then five answering systems (D3)"),
    ("dq_f04", "DebateQA Figure 4: P.D. with five restate prompts (16, then all 40 sample "
               "questions; then five answering systems)"),
    ("dq_f05", "DebateQA Figure 5: D.A. with four judges, 16 then 40 questions"),
    ("dq_t05", "DebateQA Table 5: three system prompts, 16 then 40 questions"),
    ("dq_t06", "DebateQA Table 6: no retrieval, vanilla RAG, ReAct, 16 then 40 questions"),
    ("dq_t07", "DebateQA Table 7: RAG on all vs trusted documents, 16 then 40 questions"),
    ("dq_f08_f09", "DebateQA Figures 8-9: temperature and top-p sweeps, 16 then 40 questions"),
    ("dq_f10", "DebateQA Figure 10: answer length, 16 then 40 questions"),
    ("lk_t06", "LINKAGE Table 6: four reference patterns, 0- and 3-shot, 30 questions per "
               "dataset x 8 candidates, the 1.5B judge"),
    ("lk_t07_t08", "LINKAGE Tables 7-8: 0/1/3/5 demonstrations, 30 questions per dataset"),
    ("lk_t09_t10_f02", "LINKAGE Tables 9-10, Figure 2: three reference draws, 30 questions per "
                       "dataset"),
    ("lk_x03", "beyond both papers: one sentence addressed to the judge, every judge row on "
               "ANTIQUE and TREC-DL-NF with the three guards (4 ANTIQUE questions, then 4 and "
               "10 per dataset), D.A. and P.D. on 8, then 40 sample questions"),
    ("lk_x05", "beyond the paper: the L1 and L2 rows with the 0.5B judge on lk_t02's "
               "every-candidate draw, bf16: 20 ANTIQUE and 5 TREC-DL-NF questions, then 10 "
               "TREC-DL-NF (about 100 candidates each); then SmolLM2-135M and Gemma-3-270m "
               "on the same questions"),
    ("lk_x07", "beyond both papers: the corpus's 6 held-out manipulation families (10 "
               "wordings each, with controls) against every claim row's judge and D.A. with "
               "and without --guard screen, 2 questions per LINKAGE dataset, P.D. and D.A. "
               "on 4 DebateQA sample answers"),
)


#: The artefacts of the central claims' tables. Their stages run in rounds (every claim's
#: first stage, then every claim's second, ...), so each claim gets a first verdict with the
#: 1.5B judge before any of them grows; the DebateQA analyses and the LINKAGE ablations follow.
CLAIMS = ("lk_t02", "lk_t05", "lk_t03", "lk_t04", "dq_t02", "dq_t03")

#: Questions per dataset an artefact can reach (``limit`` 0 or above them reaches them all):
#: lk_t02's judgeable questions (its drawn ANTIQUE ones, TREC-DL-NF's), which lk_t03/lk_t04 and
#: the ablations take their first questions from; WebGLM's; dq_t02's usable ones; the DebateQA
#: sample's. Used only to project a stage's cost from a finished one (questions it adds).
REACH: dict[str, tuple[int, ...]] = {
    "lk_t02": (345, 53), "lk_t03": (120, 53), "lk_t04": (120, 53), "lk_t06": (120, 53),
    "lk_t07_t08": (120, 53), "lk_t09_t10_f02": (120, 53), "lk_t05": (100,),
    "dq_t02": (430, 43), "dq_t03": (40,), "dq_t04": (40,), "dq_f03": (40,), "dq_f04": (40,),
    "dq_f05": (40,), "dq_t05": (40,), "dq_t06": (40,), "dq_t07": (40,), "dq_f08_f09": (40,),
    "dq_f10": (40,),
}

#: The stage log: a row when a stage first starts (``finished`` empty; ``stored_*``: the
#: artefact's items and their recorded seconds in the store then) and one when it finishes
#: (wall seconds of the run that finished it; items and item seconds since the first start):
#: what the run cost, and the rates the next run's projection is made from.
LOG = Path("evidence") / "stages.csv"  # under results/: a run log, not an artefact's table
LOG_FIELDS = ("finished", "artefact", "stage", "questions", "wall_s", "items_computed",
              "item_s", "machine", "commit", "started", "stored_items", "stored_s")


def schedule(ids: Sequence[str], stages: dict[str, tuple[dict, ...]] | None = None
             ) -> list[tuple[str, dict]]:
    """The order of the run's steps ``(artefact, stage)``: the claims' artefacts (:data:`CLAIMS`)
    stage by stage in rounds, then every other artefact's stages in plan order."""
    stages = STAGES if stages is None else stages
    order = {a: i for i, (a, _) in enumerate(PLAN)}
    steps = []
    for a in ids:
        for r, stage in enumerate(stages.get(a, ({},))):
            claim = a in CLAIMS
            steps.append(((0, r, order.get(a, len(order))) if claim else
                          (1, order.get(a, len(order)), r), a, stage))
    return [(a, stage) for _, a, stage in sorted(steps, key=lambda s: s[0])]


#: The datasets of a two-dataset artefact's :data:`REACH`, in its order.
REACH_DATASETS = ("antique", "trec-dl-nf")


def questions(artefact: str, stage: dict) -> int | None:
    """Questions a stage covers across its datasets (``None``: unknown); a stage that names
    ``datasets`` covers those alone."""
    reach = REACH.get(artefact)
    limit = stage.get("limit")
    if reach is None or not isinstance(limit, int) or limit < 0:
        return None
    if stage.get("datasets") and len(reach) == len(REACH_DATASETS):
        chosen = set(str(stage["datasets"]).split(","))
        reach = tuple(n for n, d in zip(reach, REACH_DATASETS) if d in chosen)
    return sum(n if limit == 0 else min(limit, n) for n in reach)


def _every(stage: dict) -> bool:
    """Whether a stage judges every candidate (``max_candidates`` 0)."""
    return stage.get("max_candidates") == 0


def _datasets(stage: dict) -> list[str]:
    """The LINKAGE datasets a stage names (all of them where it names none)."""
    return str(stage.get("datasets") or ",".join(REACH_DATASETS)).split(",")


def _adds_refppl(artefact: str, stage: dict) -> bool:
    """Whether an lk_t02 stage computes the refppl row (``refppl_lm`` not ``none``)."""
    return artefact == "lk_t02" and stage.get("refppl_lm") != "none"


def _every_work(artefact: str, stage: dict,
                judged: dict[tuple[str, str], int]) -> float | None:
    """The work an every-candidate stage adds, in units of a question times its candidates
    over 8 (:data:`CANDIDATES`): per dataset it names, the questions that earlier
    every-candidate stages of the artefact (``judged``: (artefact, dataset) -> questions,
    updated here) have not judged. None where a dataset's question count is unknown."""
    work = 0.0
    for d in _datasets(stage):
        q_d = questions(artefact, {**stage, "datasets": d})
        if q_d is None:
            return None
        work += max(q_d - judged.get((artefact, d), 0), 0) * CANDIDATES.get(d, 8.0) / 8.0
        judged[artefact, d] = max(judged.get((artefact, d), 0), q_d)
    return work


#: Where ``make bench`` writes the judge's speed-up of each dtype on each CPU class.
BENCH = Path("bench.csv")  # under results/


def dtype_speedup(dtype: str, machine: str, bench: Path | None = None) -> float | None:
    """The judge's speed-up over float32 in ``dtype`` on CPUs of class ``machine``: the last
    ``judge_path`` row of results/bench.csv for the LINKAGE workload (``make bench``); None
    where none is recorded (float32: 1)."""
    if not dtype or dtype == "float32":
        return 1.0
    path = RESULTS / BENCH if bench is None else bench
    if not path.is_file():
        return None
    found = None
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            if (row.get("kernel") == "judge_path"
                    and str(row.get("model", "")).endswith(f"/hf-{dtype}")
                    and str(row.get("workload", "")).startswith("linkage")
                    and str(row.get("workload", "")).endswith(f"@{machine}")):
                try:
                    found = float(row["speedup_vs_float32"])
                except (KeyError, TypeError, ValueError):
                    continue
    return found if found and found > 0 else None


def _stage_text(stage: dict) -> str:
    import json

    return json.dumps(stage, sort_keys=True)


def read_log(path: Path) -> list[dict]:
    """The rows of a stage log (:data:`LOG_FIELDS`); none when it does not exist."""
    if not Path(path).is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cost_table(log: Sequence[dict]) -> str:
    """The stage log as a markdown table, one row per finished stage in the log's order, then
    the totals per CPU (docs/results/evidence_stages.md's generated block ``stages``,
    :mod:`nfeval_repro.readme`); :data:`JUDGE` is written ``1.5B``. A stage only started
    (running, or killed and not resumed yet) has no cost yet: left out."""
    import json

    done = [r for r in log if r["finished"]]
    if not done:
        return "No stage has finished yet.\n"
    lines = ["| finished (UTC) | artefact | settings | questions | items | item-hours "
             "| wall h | CPU | commit |", "|---|---|---|--:|--:|--:|--:|---|---|"]
    per_cpu: dict[str, float] = {}
    for r in done:
        settings = " ".join(f"{k}={v}" for k, v in json.loads(r["stage"]).items()
                            ).replace(JUDGE, "1.5B")
        hours = float(r["item_s"] or 0) / 3600
        per_cpu[r["machine"]] = per_cpu.get(r["machine"], 0.0) + hours
        lines.append(f"| {r['finished'].replace('T', ' ')} | {r['artefact']} | "
                     f"`{settings or 'defaults'}` | {r['questions'] or '-'} | "
                     f"{int(r['items_computed'] or 0):,} | {hours:.2f} | "
                     f"{float(r['wall_s'] or 0) / 3600:.2f} | `{r['machine']}` | "
                     f"`{r['commit'][:10]}` |")
    items = sum(int(r["items_computed"] or 0) for r in done)
    cpus = "; ".join(f"`{m}` {h:.1f}" for m, h in per_cpu.items())
    lines.append(f"\nIn all, {len(done)} finished stages: {items:,} items in "
                 f"{sum(per_cpu.values()):.1f} item-hours (per CPU: {cpus}). "
                 f"1.5B: `{JUDGE}`.")
    return "\n".join(lines) + "\n"


def _append_log(path: Path, row: dict) -> None:
    """Append a row; a log written with fewer columns is rewritten with all of them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as fh:  # the header only, not the whole log
        fh.seek(0)
        same = fh.readline().strip() == ",".join(LOG_FIELDS)
    old = [] if same else read_log(path)
    with open(path, "a" if same else "w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=LOG_FIELDS, restval="")
        if not same:
            out.writeheader()
            out.writerows(old)
        out.writerow(row)


def projection(steps: Sequence[tuple[str, dict]], log: Sequence[dict],
               speedup=None) -> list[dict]:
    """Per step: ``done`` (the log holds it finished), or its projected wall seconds: the wall
    or item seconds (the larger) per question of the artefact's last finished stage times the
    questions the step adds to the largest finished one (``None``: no stage of the artefact
    finished yet, or its size unknown). Stages that judge every candidate
    (``max_candidates`` 0) are projected apart, dataset by dataset: the questions earlier
    every-candidate stages of the dataset have not judged, at the 8-candidate rate times its
    candidates per question (:data:`CANDIDATES`) over 8, or, once the artefact has finished
    an every-candidate stage in the same dtype, at that stage's own rate per question times
    candidates over 8 (``why`` says so); a stage that adds only lk_t02's
    refppl row is not projected (``why`` says so). Rows of stages only started are left
    out. A stage whose judge runs in another dtype (``judge_dtype``) is projected at the
    float32 rate divided by ``speedup(dtype)`` (default: :func:`dtype_speedup` on this CPU
    class; its row's ``speedup``), or at the float32 rate where none is recorded
    (``speedup`` None)."""
    if speedup is None:
        from nfeval.machine import machine_tag

        tag = machine_tag()

        def speedup(dtype: str) -> float | None:
            return dtype_speedup(dtype, tag)
    finished: dict[str, list[dict]] = {}
    own_every: dict[tuple[str, str], float] = {}  # (artefact, dtype) -> s per work unit
    logged_every: dict[tuple[str, str], int] = {}  # (artefact, dataset) -> questions judged
    for row in log:
        if not row["finished"]:
            continue
        logged_stage = json_loads(row["stage"])
        if not _every(logged_stage):
            finished.setdefault(row["artefact"], []).append(row)
            continue
        # a finished every-candidate judge stage that computed items: its own rate per work
        # unit it added (the questions earlier such stages of the dataset had not judged, each
        # a question times its candidates over 8), which later such stages of the artefact in
        # the same dtype are projected at. A stage that adds no question (one that reads its
        # datasets' stages from the store, even if it computes a few items) and lk_t02's refppl
        # stage (no judge item) give no rate: theirs says nothing about judging candidates
        units = _every_work(row["artefact"], logged_stage, logged_every)
        if _adds_refppl(row["artefact"], logged_stage):
            continue
        if float(row.get("items_computed") or 0) > 0 and units:
            cost = max(float(row.get("wall_s") or 0), float(row.get("item_s") or 0))
            own_every[row["artefact"], str(logged_stage.get("judge_dtype") or "")] = \
                cost / units
    logged = {(r["artefact"], r["stage"]) for r in log if r["finished"]}
    every: dict[tuple[str, str], int] = {}  # (artefact, dataset) -> questions judged
    every_refppl: dict[tuple[str, str], int] = {}  # (artefact, dataset) -> with the refppl row
    rows = []
    for a, stage in steps:
        mine = finished.get(a, [])
        done = (a, _stage_text(stage)) in logged
        q = questions(a, stage)
        per = reached = None
        # a stage rerun from a store that already held its items says nothing about a rate
        sized = [r for r in mine if r.get("questions") not in ("", None)
                 and float(r.get("items_computed") or 0) > 0]
        if sized:
            last = sized[-1]
            before = [int(r["questions"]) for r in sized[:-1]]
            added = int(last["questions"]) - max(before, default=0)
            cost = max(float(last["wall_s"]), float(last.get("item_s") or 0))
            per = cost / added if added > 0 else None
            reached = max(int(r["questions"]) for r in sized)
        dtype = str(stage.get("judge_dtype") or "")
        gain = speedup(dtype) if dtype and dtype != "float32" else None
        if per is not None and gain:
            per /= gain
        projected, why = None, ""
        if _every(stage):
            # per dataset: the questions earlier every-candidate stages of it have not judged,
            # each at the 8-candidate rate times its candidates per question over 8
            work = _every_work(a, stage, every)
            new_refppl = False
            if _adds_refppl(a, stage):
                for d in _datasets(stage):
                    q_d = questions(a, {**stage, "datasets": d}) or 0
                    new_refppl = new_refppl or q_d > every_refppl.get((a, d), 0)
                    every_refppl[a, d] = max(every_refppl.get((a, d), 0), q_d)
            rate = own_every.get((a, dtype))
            if new_refppl and work == 0:
                why = "the refppl row on every candidate: its rate is not logged apart"
            elif not done and rate is not None and work is not None:
                projected, gain = rate * work, None  # measured in this dtype: no speed-up
                why = "at the rate of its last finished every-candidate stage"
            elif not done and per is not None and work is not None:
                projected = per * work
        elif not done and per is not None and q is not None:
            projected = per * max(q - reached, 0)
        rows.append({"artefact": a, "stage": stage, "questions": q, "done": done,
                     "projected_s": projected, "dtype": dtype, "speedup": gain, "why": why})
        if projected is not None and not _every(stage):  # the artefact's next step starts here
            finished.setdefault(a, []).append({"artefact": a, "stage": _stage_text(stage),
                                               "questions": str(q), "wall_s": str(projected),
                                               "items_computed": "1"})
    return rows


def json_loads(text: str) -> dict:
    """A stage's parameters from its log text ({} when it is not JSON)."""
    import json

    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def print_projection(steps: Sequence[tuple[str, dict]], log_path: Path) -> None:
    """Print the plan's steps with what each is projected to take (:func:`projection`)."""
    rows = projection(steps, read_log(log_path))
    todo = [r for r in rows if not r["done"]]
    known = sum(r["projected_s"] for r in todo if r["projected_s"] is not None)
    unknown = [r for r in todo if r["projected_s"] is None]
    print(f"the plan: {len(rows)} steps, {len(rows) - len(todo)} logged as done in "
          f"{display_path(log_path)}", flush=True)
    for i, r in enumerate(rows, 1):
        if r["done"]:
            what = "done"
        elif r["projected_s"] is None:
            what = f"not projected: {r.get('why') or 'no finished stage of it logged yet'}"
        else:
            what = f"projected {r['projected_s'] / 3600:.1f} h" + (
                f" ({r['why']})" if r.get("why") else
                "" if not r.get("dtype") or r["dtype"] == "float32" else
                f" ({r['dtype']}: float32's rate / {r['speedup']:.2f}, results/bench.csv)"
                if r.get("speedup") else
                f" ({r['dtype']} at float32's rate: `make bench` records none here)")
        q = f"{r['questions']} questions" if r["questions"] is not None else "size unknown"
        print(f"  {i:>2}. {r['artefact']:<15} {_stage_text(r['stage']):<58} {q:<14} {what}")
    print(f"projected: {known / 3600:.1f} h of wall time for the {len(todo) - len(unknown)} "
          f"projected steps (wall or item seconds, the larger, per question of each artefact's "
          f"last finished stage, on the machine that logged it), plus {len(unknown)} steps not "
          f"projected yet (each artefact's first stage measures its rate; `make evidence-cost` projects the items "
          f"the store already holds)", flush=True)


#: The probe of ``--measure``: the smallest stage of each artefact that computes every kind of
#: item its plan does (sizes grow by extension, so a probe's items are the plan's first ones).
PROBE: dict[str, dict] = {
    "lk_t02": {"limit": 1, **_EIGHT, "sample_limit": 1, "lexical_limit": 1},
    "dq_t03": {"limit": 2},
    "lk_t05": {"limit": 3, "lexical_limit": 3, **_J},
    "lk_t03": {"limit": 1, **_GEN, **_EIGHT_1GT},
    "lk_t04": {"limit": 1, **_GEN, "judge_dtype": "float32"},
    "dq_t02": {"limit": 2, **_J},
    "dq_t04": {"limit": 1},
    "dq_f03": {"limit": 1},
    "dq_f04": {"limit": 1},
    "dq_f05": {"limit": 1},
    "dq_t05": {"limit": 1},
    "dq_t06": {"limit": 1},
    "dq_t07": {"limit": 1},
    "dq_f08_f09": {"limit": 1},
    "dq_f10": {"limit": 1},
    "lk_t06": {**_ABL, "limit": 1},
    "lk_t07_t08": {**_ABL, "limit": 1},
    "lk_t09_t10_f02": {**_ABL, "limit": 1},
    # two questions: the few-shot row's one demonstration is the other one
    "lk_x03": {"limit": 2, "shots": 1, "dq_limit": 1},
    "lk_x05": {"limit": 1, "trec_limit": 1},
    "lk_x07": {"limit": 1, "datasets": "antique", "dq_limit": 1},
}

#: The wall time ``make evidence`` is planned to fit (seconds on 2 cores).
BUDGET_S = 6 * 3600


def _stored_items(artefact: str) -> int:
    import os

    folder = Path(os.environ.get("NFEVAL_STORE") or RESULTS) / artefact / "items"
    return sum(sum(1 for _ in p.open(encoding="utf-8")) for p in folder.glob("*.jsonl"))


def stop_on_interrupt(target: str = "evidence", module: str = "nfeval_repro.evidence") -> None:
    """Make Ctrl-C (SIGINT) end the run within seconds (module doc): every process under this
    one (the notebook's kernel, in a session of its own) is ended, then this one says how to
    resume (``make <target>`` or ``python -m <module>``) and exits 130."""
    import os
    import signal

    def handler(signum, frame):  # noqa: ARG001
        import psutil

        kids = psutil.Process().children(recursive=True)
        for p in kids:
            try:
                p.terminate()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(kids, timeout=3)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        args = " ".join(sys.argv[1:])
        print(f"\ninterrupted: every finished item is stored (results/<id>/items/); run the same "
              f"command again to resume (make {target}{' IDS=...' if args else ''}, or "
              f"python -m {module} {args})".rstrip(), file=sys.stderr, flush=True)
        os._exit(130)

    signal.signal(signal.SIGINT, handler)


#: Where a stage that scores part of an artefact's datasets writes its tables, under
#: ``<output_dir>/results/``: such a table is no state of the artefact's own (its committed
#: table keeps both datasets), so it goes beside it (its items still go to the store).
PARTS = Path("evidence") / "parts"


def stage_output(artefact: str, stage: dict, output_dir: Path = ROOT) -> Path:
    """The folder a stage's notebook writes its tables under: ``output_dir``, or for a stage
    whose ``datasets`` parameter names one of the two LINKAGE datasets only,
    ``<output_dir>/results/evidence/parts/<artefact>-<dataset>`` (:data:`PARTS`), so the
    committed table never holds one dataset."""
    part = [d for d in str(stage.get("datasets") or "").split(",") if d]
    if not part or set(REACH_DATASETS) <= set(part):
        return Path(output_dir)
    return Path(output_dir) / RESULTS.relative_to(ROOT) / PARTS / f"{artefact}-{'+'.join(part)}"


def run(ids: Sequence[str], output_dir: Path = ROOT,
        stages: dict[str, tuple[dict, ...]] | None = None,
        overrides: dict | None = None) -> dict[str, float]:
    """Run the plan's stages of ``ids`` (or the given ``stages``) in :func:`schedule`'s order,
    with their tables written under ``output_dir``; ``overrides`` are notebook parameters given
    to every stage. Each stage of the plan is appended to ``<output_dir>/results/evidence/stages.csv``
    when it starts and finishes (wall and item seconds, machine, commit); an ``overrides`` run
    (``--set``) is no stage of the plan and is not logged. The seconds each artefact took."""
    import datetime
    import os

    import papermill as pm

    from nfeval_repro.artefacts import by_id
    from nfeval.machine import machine_tag
    from nfeval_repro.tables import git_commit

    steps = schedule(ids, stages)
    results = Path(output_dir) / RESULTS.relative_to(ROOT)
    out_dir = results / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = results / LOG
    store = Path(os.environ.get("NFEVAL_STORE") or RESULTS)
    done = {(r["artefact"], r["stage"]): r for r in read_log(log_path) if r["finished"]}
    started = time.time()
    took: dict[str, float] = {}
    failed: dict[str, str] = {}
    for i, (artefact, stage) in enumerate(steps, 1):
        art = by_id(artefact)
        params = {**dict(art.parameters), **stage, **(overrides or {})}
        logged = None if overrides else done.get((artefact, _stage_text(stage)))
        if logged is not None:
            missing = missing_items(store, artefact, logged)
            if missing is None:
                print(f"\n== [{i}/{len(steps)}] {artefact} {stage}: logged as done without the "
                      f"count of items it left in the store (`python -m nfeval_repro.evidence "
                      f"--backfill` records it): running it again, from the store", flush=True)
            elif not missing:
                print(f"\n== [{i}/{len(steps)}] {artefact} {stage}: done (logged in "
                      f"{display_path(log_path)}, its items in the store), skipped", flush=True)
                continue
            else:
                print(f"\n== [{i}/{len(steps)}] {artefact} {stage}: logged as done, but the "
                      f"store holds {missing} fewer of {artefact}'s items than when it "
                      f"finished: computing what is missing", flush=True)
        if artefact in failed:
            print(f"\n== [{i}/{len(steps)}] {artefact} {stage}: skipped, an earlier stage of "
                  f"{artefact} failed", flush=True)
            continue
        print(f"\n== [{i}/{len(steps)}] {artefact} {stage or 'at its defaults'}: "
              f"{dict(PLAN).get(artefact, art.item)}\n   {_stored_items(artefact)} items stored; "
              f"{time.time() - started:.0f} s elapsed", flush=True)
        before = read_items(store, artefact).get(artefact, {})
        text, q = _stage_text({**stage, **(overrides or {})}), questions(artefact, params)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
        first = None if overrides else _first_start(read_log(log_path), artefact, text)
        if first is None:  # a stage's first start: the store then is what its cost counts from
            first = {"artefact": artefact, "stage": text, "finished": "", "started": now,
                     "questions": "" if q is None else q, "machine": machine_tag(),
                     "commit": git_commit(), **_totals(before)}
            if not overrides:  # a --set run is no stage of the plan: the plan's log leaves it out
                _append_log(log_path, first)
        else:
            print(f"   resumed: first started {first['started']}", flush=True)
        t = time.time()
        where = stage_output(artefact, {**stage, **(overrides or {})}, output_dir)
        env_store = os.environ.get("NFEVAL_STORE")
        if where != Path(output_dir):  # its items still go to the store the run reads
            where.mkdir(parents=True, exist_ok=True)
            os.environ["NFEVAL_STORE"] = str(store)
            print(f"   a part of {artefact}'s datasets: its tables go to "
                  f"{display_path(where)}", flush=True)
        try:
            pm.execute_notebook(str(art.path), str(out_dir / art.executed),
                                parameters={"output_dir": str(where), **params},
                                cwd=str(NOTEBOOKS), kernel_name="python3", log_output=True,
                                progress_bar=False, stdout_file=sys.stdout,
                                stderr_file=sys.stderr)
        except Exception as exc:  # noqa: BLE001 -- one failed notebook must not end an hours-long run
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:300]
            failed[artefact] = f"{stage}: {first}"
            print(f"!! {artefact} {stage} failed after {time.time() - t:.0f} s: {first}\n"
                  f"   its items so far are stored; the executed notebook is "
                  f"{display_path(out_dir / art.executed)}; the run goes on with the other "
                  f"artefacts", file=sys.stderr, flush=True)
            continue
        finally:
            if env_store is None:
                os.environ.pop("NFEVAL_STORE", None)
            else:
                os.environ["NFEVAL_STORE"] = env_store
        wall = time.time() - t
        after = read_items(store, artefact).get(artefact, {})
        took[artefact] = took.get(artefact, 0.0) + wall
        end = _totals(after)
        items = end["stored_items"] - int(first["stored_items"])
        secs = end["stored_s"] - float(first["stored_s"])
        if not overrides:
            _append_log(log_path, {
                "finished": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
                "artefact": artefact, "stage": text, "questions": "" if q is None else q,
                "wall_s": round(wall, 1), "items_computed": items, "item_s": round(secs, 1),
                "machine": machine_tag(), "commit": git_commit(), "started": first["started"],
                **end})
            if log_path.resolve() == (RESULTS / LOG).resolve():
                refresh_cost_page(log_path)
        where = "not logged (--set)" if overrides else f"logged in {display_path(log_path)}"
        print(f"== {artefact} {stage}: {wall:.0f} s, {items} items computed since "
              f"{first['started']} ({secs / 3600:.2f} item-hours), {_stored_items(artefact)} "
              f"items stored; {where}", flush=True)
    print(f"\nevidence run: {time.time() - started:.0f} s", flush=True)
    if failed:
        raise StagesFailed(failed)
    return took


#: The page whose generated ``stages`` block is the cost table of the repository's log.
COST_PAGE = ROOT / "docs" / "results" / "evidence_stages.md"


def refresh_cost_page(log_path: Path, page: Path = COST_PAGE) -> bool:
    """Rewrite ``page``'s ``stages`` block (:func:`cost_table` of the log at ``log_path``), as
    ``make readme`` does, so a stage that finishes leaves no stale page behind; whether the
    page changed. A page without the block is left as it is, with a note."""
    from nfeval.errors import NfevalError
    from nfeval_repro.pageblocks import render

    if not page.is_file():
        return False
    text = page.read_text(encoding="utf-8")
    try:
        new = render(text, {"stages": cost_table(read_log(log_path))})
    except NfevalError as exc:
        print(f"{display_path(page)}: its cost table is not updated ({exc})", flush=True)
        return False
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def missing_items(store: Path, artefact: str, logged: dict) -> int | None:
    """How many fewer items the store holds for ``artefact`` than when the logged stage
    finished (``stored_items`` of its finish row; 0 when it holds them all): a fast count of
    the store's keys, so a stage whose items were deleted is not taken as done. ``None``: the
    row has no count (a log written before the column; :func:`backfill` records one)."""
    try:
        then = int(float(logged.get("stored_items")))
    except (TypeError, ValueError):
        return None
    now = _totals(read_items(store, artefact).get(artefact, {}))["stored_items"]
    return max(then - now, 0)


def backfill(log_path: Path, store: Path) -> int:
    """Give every finish row of the log without ``stored_items`` the store's count of its
    artefact now (an upper bound of the count then: the store only grows), so the next run
    can tell a deleted item (:func:`missing_items`); returns the rows filled."""
    rows = read_log(log_path)
    filled = 0
    for r in rows:
        if r["finished"] and not str(r.get("stored_items") or "").strip():
            r.update({k: str(v) for k, v in
                      _totals(read_items(store, r["artefact"]).get(r["artefact"], {})).items()})
            filled += 1
    if filled:
        with open(log_path, "w", newline="", encoding="utf-8") as fh:
            out = csv.DictWriter(fh, fieldnames=LOG_FIELDS, restval="")
            out.writeheader()
            out.writerows(rows)
    return filled


def read_items(folder: Path, artefact: str = "*"
               ) -> dict[str, dict[str, dict[str, tuple[str, float]]]]:
    """``{artefact: {store file: {key: (machine class, seconds)}}}`` of a results folder
    (``<folder>/<artefact>/items/*.jsonl``; every artefact, or the one named); lines cut
    short by a kill are skipped."""
    from nfeval_repro.store import read_records

    out: dict[str, dict[str, dict[str, tuple[str, float]]]] = {}
    for path in sorted(Path(folder).glob(f"{artefact}/items/*.jsonl")):
        entries = out.setdefault(path.parent.parent.name, {}).setdefault(path.name, {})
        for rec in read_records(path):
            entries.setdefault(rec["k"], (str(rec.get("m", "?")), float(rec.get("s") or 0.0)))
    return out


def _totals(items: dict[str, dict[str, tuple[str, float]]]) -> dict:
    """The item count and recorded seconds of one artefact's :func:`read_items`."""
    return {"stored_items": sum(len(ent) for ent in items.values()),
            "stored_s": round(sum(s for ent in items.values() for _, s in ent.values()), 1)}


def _first_start(log: Sequence[dict], artefact: str, stage: str) -> dict | None:
    """The start row of a stage begun and not finished since (a resumed stage), else None."""
    first = None
    for r in log:
        if (r["artefact"], r["stage"]) == (artefact, stage):
            first = None if r["finished"] else (first or r)
    return first


class StagesFailed(RuntimeError):
    """Some stages' notebooks failed (the others ran): ``{artefact: what failed}``."""

    def __init__(self, failed: dict[str, str]):
        self.failed = failed
        super().__init__("; ".join(f"{a} {what}" for a, what in failed.items()))


def split_ids(ids: Sequence[str]) -> list[str]:
    """Artefact ids as given, spaces or commas between them (``IDS=dq_f03,dq_f04``)."""
    return [a for arg in ids for a in arg.split(",") if a.strip()]


def unknown_ids(ids: Sequence[str], prog: str) -> bool:
    """Whether an id is not an artefact of the plan (``prog`` says which on stderr)."""
    known = [a for a, _ in PLAN]
    if bad := [a for a in ids if a not in known]:
        print(f"{prog}: unknown artefact(s) {bad}; the plan has {known}", file=sys.stderr)
    return bool(bad)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nfeval_repro.evidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*", help="artefact ids, space- or comma-separated "
                        "(default: the whole plan)")
    parser.add_argument("--list", action="store_true",
                        help="print the plan, its steps in order and their projected cost, and "
                             "exit")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="a notebook parameter given to every stage (repeatable), e.g. "
                             "--set judge=smollm2-135m-instruct; numbers are read as numbers; "
                             "such a run is no stage of the plan and the stage log skips it")
    parser.add_argument("--backfill", action="store_true",
                        help="record the store's item count on every finished stage of the log "
                             "that has none (logs written before the column), and exit")
    args = parser.parse_args(argv)
    args.ids = split_ids(args.ids)
    if args.backfill:
        import os

        n = backfill(RESULTS / LOG, Path(os.environ.get("NFEVAL_STORE") or RESULTS))
        print(f"{n} finished stage(s) given the store's item count in {display_path(RESULTS / LOG)}")
        return 0
    known = [a for a, _ in PLAN]
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(f"nfeval_repro.evidence: --set takes KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        try:
            overrides[key.strip()] = int(value)
        except ValueError:
            overrides[key.strip()] = value
    if args.list:
        for a, what in PLAN:
            print(f"{a:<8} {_stored_items(a):>7} items stored  {what}")
        print_projection(schedule(args.ids or known), RESULTS / LOG)
        return 0
    if unknown_ids(args.ids, "nfeval_repro.evidence"):
        return 2
    stop_on_interrupt()
    try:
        ids = args.ids or known
        if not overrides:
            print_projection(schedule(ids), RESULTS / LOG)
        run(ids, overrides=overrides)
        return 0
    except StagesFailed as exc:
        print(f"nfeval_repro.evidence: {len(exc.failed)} artefact(s) failed, the rest ran:",
              file=sys.stderr)
        for a, what in exc.failed.items():
            print(f"  {a} {what}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
