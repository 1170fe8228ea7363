"""lk_t05, LINKAGE Table 5 (WebGLM): finding the best (and worst) of three answers.

The notebook ``lk_t05_webglm.ipynb`` calls :func:`run`. The automatic rows
(against ``ground3``) and answer length are scored on the first
``lexical_limit`` questions, the LLM rows (Pointwise with references,
Pairwise, LINKAGE with the graded list ``ground3..ground0``) on the first
``limit`` (:mod:`nfeval_repro.linkage.webglm_scores`); Acc(best) and
Acc(best+worst) with their 95% intervals, LINKAGE minus every other row and
the paper's figures come from :mod:`nfeval_repro.linkage.webglm_hits`, as
does the diagnosis of the lexical rows (``results/lk_t05/lexical_diagnosis.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.data import load_webglm
from nfeval_repro.linkage.evaluation import webglm_split
from nfeval.errors import NfevalError
from nfeval_repro.linkage.webglm_hits import (DEFAULT_JUDGE_ROWS, JUDGE_ROWS, METRICS, chance_hits,
                                               diagnostic_table, lexical_variants,
                                               paper_columns, question_subsets, table_rows)
from nfeval_repro.linkage.webglm_scores import (automatic_frame, automatic_signatures,
                                                      judge_frame, length_frame, webglm_sample)
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, Signature, paper_values

__all__ = ["Config", "run"]

ID = "lk_t05"
COLUMNS = ["dataset", "method", "judge", "metric", "ties", "ours", "ci_low", "ci_high",
           "n_questions", "paper", "gap", "paper_in_ci", "our_judge", "hits", "n_top_ties",
           "n_bottom_ties", "n_nan", "n_unparsed", "interval", "a_mean", "b_mean"]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t05_webglm.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: pairwise positions, sampling and bootstrap seed
    seed: int = 0
    #: questions for the LLM judge rows, in file order; 0 for all 100 (the evidence run's size)
    limit: int = 0
    #: questions for the automatic metrics and the lexical diagnosis, 0 for all
    lexical_limit: int = 0
    #: LLM judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: prob or sample; empty: the profile's (embedded prob, paper sample)
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"
    #: comma-separated LLM rows; empty: pointwise-ref,pairwise,pairwise-release,linkage
    #: (pairwise-release: pairwise as the release runs it, the candidate first; about half an hour
    #: in float32 on 2 cores from an empty store)
    judge_rows: str = ""
    #: demonstrations of the LINKAGE row (other WebGLM questions); 0: the release's prompt
    shots: int = 0
    #: questions the paper labelled: size of the random subsets of the diagnosis
    subset_size: int = 50


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 5 and the lexical diagnosis (random subsets of ``subset_size`` questions).

    ``judge_rows``: comma-separated rows of :data:`~nfeval_repro.linkage.webglm_hits.JUDGE_ROWS`
    (empty: :data:`~nfeval_repro.linkage.webglm_hits.DEFAULT_JUDGE_ROWS`; ``pairwise-release``
    adds pairwise as the release runs it, the candidate first).

    ``extra``: ``row_costs`` (seconds per LLM row in this run), ``chance`` (the
    accuracy of a method that ties every answer, per metric), ``n_judged`` (questions
    of the LLM rows).
    """
    rows = [r for r in config.judge_rows.split(",") if r] or list(DEFAULT_JUDGE_ROWS)
    unknown = [r for r in rows if r not in JUDGE_ROWS]
    if unknown:
        raise NfevalError(f"unknown WebGLM judge row(s) {unknown}; use {list(JUDGE_ROWS)}")
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    questions = load_webglm()
    sample = webglm_sample(questions, config.limit)
    lex_questions = questions[:config.lexical_limit] if config.lexical_limit else questions
    lex_splits = [webglm_split(q) for q in lex_questions]
    if progress:
        grade_sets = pd.Series([",".join(map(str, sorted(q.grades, reverse=True)))
                                for q in questions])
        print(len(questions), "questions; answer grades per question:",
              grade_sets.value_counts().to_dict())
        print(f"judge rows: {len(sample.judged)} questions ({judge_name}, {mode}); automatic "
              f"rows: {len(lex_questions)} questions")

    t = time.time()
    embedder = prof.embedder if config.profile == "paper" else None
    num_layers = 6 if config.profile == "embedded" else None
    frames = [automatic_frame(lex_questions, lex_splits, embedder=embedder,
                              num_layers=num_layers, device=prof.device),
              length_frame(lex_splits)]
    signatures = automatic_signatures(seed=config.seed, n=len(lex_splits), embedder=embedder,
                                      num_layers=num_layers)
    signatures.append(Signature(metric="length", variant="whitespace-words", seed=config.seed,
                                n=len(lex_splits), extra={"beyond_paper": True}))
    if progress:
        print(f"automatic metrics in {time.time() - t:.0f} s")

    t = time.time()
    model = prof.load(judge_name)
    row_costs = []
    for row in rows:
        part, signature, seconds = judge_frame(model, questions, sample, row=row, mode=mode,
                                               seed=config.seed, shots=config.shots,
                                               unparsed=config.unparsed, progress=progress)
        frames.append(part)
        signatures.append(signature)
        row_costs.append({"row": row, "questions": len(sample.judged),
                          "seconds": round(seconds, 1),
                          "s_per_question": round(seconds / max(len(sample.judged), 1), 2)})
    if progress:
        print(f"judge rows in {time.time() - t:.0f} s ({model.info.name}, {model.info.dtype}, "
              f"{mode}); seconds are this run's (near 0 for what the item store already held)")

    frame = pd.concat(frames, ignore_index=True)
    rows, _ = table_rows(frame, seed=config.seed)
    paper = paper_values(ID)
    table = paper_columns(rows, paper)[COLUMNS]

    t = time.time()
    diagnosis = diagnostic_table(lexical_variants(lex_questions),
                                 question_subsets(lex_questions, config.subset_size),
                                 {(r.method, r.metric): r.paper for r in paper.itertuples()},
                                 size=config.subset_size)
    if progress:
        print(f"lexical diagnosis in {time.time() - t:.0f} s")
    chance = chance_hits(frame)
    return Experiment(
        ID, table, id_columns=["dataset", "method", "judge", "metric", "ties"],
        interval="questions", signatures=signatures,
        parameters=dict(judge=judge_name, judge_mode=mode, judge_rows=rows),
        notes="ours: share of questions (ties = miss: a tie for the top or bottom place is a "
              "miss; expected: ties broken at random, in expectation), 95% Wilson interval over "
              "questions (bootstrap where tied questions count fractions). 'linkage - X': mean "
              "per-question hit difference on the same questions, paired bootstrap "
              f"({N_RESAMPLES:,} resamples, seeded). The paper's judge is Mistral-7B-Instruct-v0.2 on 50 "
              "questions; ours is our_judge on n_questions. The paper's BERTScore is printed "
              "beside both our BERTScore rows; length is a row beyond the paper.",
        frames={"per_candidate": frame, "lexical_diagnosis": diagnosis},
        extra={"row_costs": pd.DataFrame(row_costs), "n_judged": len(sample.judged),
               "chance": {metric: float(chance[column].mean())
                          for metric, column in METRICS.items()}})
