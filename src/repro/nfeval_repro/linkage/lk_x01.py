"""lk_x01: beyond LINKAGE: a combined evaluator, chosen on some questions and judged on others.

Every per-candidate score of lk_t02's "same items" (every candidate of its judged questions:
the 1.5B judge's LINKAGE 0- and 3-shot, pointwise with and without references, pairwise with
the candidate first as the release runs it; ROUGE-1/2/L, BLEU, both BERTScores, the
reference-recovery perplexity) is already in ``results/lk_t02/per_candidate.csv``: no model
runs here. A combination is scored **out of sample**: each dataset's questions are split into
folds by question (seeded, repeated), the combination is chosen or fitted on the training
folds only, and its per-question Spearman and Kendall with the human grades are measured on
the held-out fold. The procedure is fixed before any held-out grade is read:

* **best single** (the yardstick): the method with the highest mean per-question Spearman on
  the training questions;
* **rank average**: the mean of the per-question ranks of two or three methods; the pair or
  triple with the highest mean training Spearman is chosen;
* **linear**: scores z-standardized within each question (a constant score gives 0), grades
  likewise, and a ridge regression (``alpha`` 1.0) of the grade on the methods fitted on the
  training candidates; the held-out score is the fitted combination.

Each held-out question gets one value per repeat; its value is the mean over the repeats, and
every row's 95% interval is a percentile bootstrap over questions
(:func:`nfeval.metrics.intervals.mean_interval`), paired for the differences. **Transfer**
rows choose or fit on every question of one dataset and score the other. Judge calls per
candidate: LINKAGE and pointwise one prompt each, pairwise one per reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.metrics import combine
from nfeval.metrics.combine import ALPHA, CHOSEN
from nfeval.metrics.intervals import N_RESAMPLES, mean_interval, paired_difference
from nfeval_repro.paths import RESULTS
from nfeval_repro.tables import Experiment, Signature, paper_values

__all__ = ["Config", "run"]

ID = "lk_x01"
#: The per-candidate scores combined (all oriented so that higher is better, as lk_t02 stores
#: them), with the judge prompts each costs per candidate ("r": one per reference).
METHODS: dict[str, str] = {
    "linkage-0shot": "1", "linkage-fewshot": "1", "pointwise-noref": "1",
    "pointwise-ref": "1", "pairwise-release": "r", "rouge1": "0", "rouge2": "0", "rougeL": "0",
    "bleu": "0", "bertscore": "0", "bertscore-cls": "0", "refppl": "0",
}
COEFFICIENTS = ("spearman", "kendall")
NOTES = ("Out-of-sample: questions split into folds by question (seeded, repeated); a "
         "combination chosen (best single method, best rank average of 2-3 methods) or fitted "
         "(ridge on within-question z-scores, alpha 1) on the training folds only, scored on the "
         "held-out fold; a question's value is its mean over the repeats. 'transfer' rows choose "
         "or fit on one dataset and score the other. Intervals: 95% percentile bootstrap over "
         f"questions ({N_RESAMPLES:,} resamples, seeded), paired for the differences. paper: the "
         "paper's best Table 2 Spearman of the dataset (a line, not the same quantity's paper "
         "value). Inputs: results/lk_t02/per_candidate.csv ('same items'); no model runs.")


# --------------------------------------------------------------------------- data

def candidate_frame(per_candidate: pd.DataFrame, judge: str,
                    methods: Sequence[str] = tuple(METHODS)) -> tuple[pd.DataFrame, int]:
    """One row per candidate of lk_t02's "same items" (``dataset, qid, doc_id, grade`` and a
    column per method), judged by ``judge``; candidates missing any method's score are left
    out (their count is returned with the frame)."""
    same = per_candidate[(per_candidate["sample"] == "same items")
                         & per_candidate["method"].isin(list(methods))]
    judged = same["method"].isin([m for m, c in METHODS.items() if c != "0"])
    same = same[~judged | (same["our_judge"] == judge)]  # the judge's rows, every model-free one
    wide = same.pivot_table(index=["dataset", "qid", "doc_id", "grade"], columns="method",
                            values="score", aggfunc="first").reset_index()
    missing = [m for m in methods if m not in wide.columns]
    if missing:
        raise NfevalError(f"lk_t02's per-candidate file has no scores of {missing} "
                          f"(judge {judge!r}).")
    full = wide.dropna(subset=list(methods))
    return full[["dataset", "qid", "doc_id", "grade", *methods]].reset_index(drop=True), \
        int(len(wide) - len(full))


FIXED = ("linkage-0shot", "bertscore")  # the fixed rows the chosen ones are set against


def out_of_sample(questions, methods, *, folds: int, repeats: int, seed: int, key: str,
                  alpha: float = ALPHA) -> tuple[dict, list[dict]]:
    """:func:`nfeval.metrics.combine.out_of_sample` with lk_x01's fixed rows and coefficients."""
    cv = combine.CrossValidation(folds, repeats, seed, key=key, prefix=ID)
    return combine.out_of_sample(questions, methods, cv, alpha=alpha, fixed=FIXED,
                                 coefficients=COEFFICIENTS)


def transfer(train_q, test_q, methods, alpha: float = ALPHA):
    """:func:`nfeval.metrics.combine.transfer` with lk_x01's fixed rows and coefficients."""
    return combine.transfer(train_q, test_q, methods, alpha, fixed=FIXED,
                            coefficients=COEFFICIENTS)


# --------------------------------------------------------------------------- table

def _rows(per: Mapping, *, kind: str, dataset: str, seed: int, key: str, paper: float,
          choice_text: str = "") -> list[dict]:
    rows = []
    names = [n for n in (*CHOSEN, *FIXED) if n in per]
    for coef in COEFFICIENTS:
        for name in names:
            vals = {q: v for q, v in per[name][coef].items() if np.isfinite(v)}
            iv = mean_interval(list(vals.values()), seed=seed, key=f"{key}/{name}/{coef}")
            rows.append({"kind": kind, "dataset": dataset, "evaluator": name,
                         "coefficient": coef, **iv.columns(),
                         "paper": paper if coef == "spearman" else math.nan,
                         "chosen": choice_text if name in CHOSEN else ""})
        for a, b in [("rank average", "best single"), ("linear", "best single"),
                     ("rank average", "bertscore"), ("linear", "bertscore"),
                     ("best single", "bertscore"), ("rank average", "linkage-0shot"),
                     ("linear", "linkage-0shot")]:
            if a in per and b in per:
                va = {q: v for q, v in per[a][coef].items() if np.isfinite(v)}
                vb = {q: v for q, v in per[b][coef].items() if np.isfinite(v)}
                iv = paired_difference(va, vb, seed=seed, key=f"{key}/{a} - {b}/{coef}")
                common = [q for q in va if q in vb]
                rows.append({"kind": f"{kind} difference", "dataset": dataset,
                             "evaluator": f"{a} - {b}", "coefficient": coef, **iv.columns(),
                             "a_mean": float(np.mean([va[q] for q in common])) if common
                             else math.nan,
                             "b_mean": float(np.mean([vb[q] for q in common])) if common
                             else math.nan})
    return rows


def _paper_best(dataset: str) -> float:
    paper = paper_values("lk_t02")
    sel = paper[(paper["dataset"] == dataset) & (paper["coefficient"] == "spearman")
                & paper["judge"].isin(["mistral", "chatgpt"])]
    return float(sel["paper"].max()) if len(sel) else math.nan


def _cost(methods: Sequence[str]) -> str:
    calls = [METHODS[m] for m in methods if METHODS[m] != "0"]
    n = sum(1 for c in calls if c == "1")
    r = "r" in calls
    return (f"{n}{' + r' if r else ''} judge prompts per candidate" if calls
            else "no judge prompt")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x01_combined_evaluator.ipynb`` is written from them."""

    #: run profile (the scores are read from lk_t02's committed file; no model runs)
    profile: str = "embedded"
    #: random seed: the folds of each repeat and the bootstrap intervals
    seed: int = 0
    #: each dataset's first questions, 0 for all (a smaller limit: a smoke run)
    limit: int = 0
    #: folds per repeat (questions, not candidates, are split)
    folds: int = 5
    #: repeats of the fold split, each with its own seeded permutation
    repeats: int = 5
    #: the per-candidate scores combined
    methods: str = ",".join(METHODS)
    #: ridge penalty of the linear combination
    alpha: float = ALPHA


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The combined evaluator out of sample (parameters: the notebook's), from the committed
    ``results/lk_t02/per_candidate.csv``. ``limit`` > 0 keeps each dataset's first ``limit``
    questions (a smoke run)."""
    # config.profile is unused: every score is read from lk_t02's file; no model runs
    return evaluate(RESULTS, seed=config.seed, fold_seed=config.seed, limit=config.limit,
                    folds=config.folds, repeats=config.repeats, methods=config.methods,
                    alpha=config.alpha, progress=progress)


#: The folds' fits of the last :func:`evaluate` (one entry: its files, methods and folds), so
#: the claims' seed checks, which vary only the bootstrap seed, fit them once per process.
_FITTED: dict = {}


def _fit(src: Path, names: list[str], *, folds: int, repeats: int, fold_seed: int,
         alpha: float, limit: int):
    """The questions, the dropped counts, each dataset's out-of-sample fits and each pair's
    transfer fits of :func:`evaluate` (nothing here depends on the bootstrap seed)."""
    params = json.loads((src / "lk_t02.json").read_text())["parameters"]
    judge = str(params.get("judge") or "")
    per_candidate = pd.read_csv(src / "lk_t02" / "per_candidate.csv",
                                dtype={"qid": str, "doc_id": str, "mode": str,
                                       "our_judge": str})
    frame, dropped = candidate_frame(per_candidate, judge, names)
    qs = {ds: combine.questions_of(g, names) for ds, g in frame.groupby("dataset", sort=True)}
    if limit:
        qs = {ds: q[:limit] for ds, q in qs.items()}
    fitted = {}
    for ds, questions in qs.items():
        if len(questions) < folds:
            raise NfevalError(f"{ds}: {len(questions)} questions, fewer than {folds} folds.")
        fitted[ds] = out_of_sample(questions, names, folds=folds, repeats=repeats,
                                   seed=fold_seed, key=ds, alpha=alpha)
    moved = {(a, b): transfer(qs[a], qs[b], names, alpha)
             for a in qs for b in qs if a != b}
    return qs, dropped, fitted, moved, judge, frame


def evaluate(results: str | Path, *, seed: int = 0, fold_seed: int = 0, limit: int = 0,
             folds: int = 5, repeats: int = 5, methods: str = ",".join(METHODS),
             alpha: float = ALPHA, progress: bool = True) -> Experiment:
    """:func:`run` on the lk_t02 files under ``results``; ``fold_seed`` seeds the folds alone
    and ``seed`` the bootstrap, so the claims' seed check can vary only the resampling."""
    names = [m.strip() for m in methods.split(",") if m.strip()]
    if unknown := [m for m in names if m not in METHODS]:
        raise NfevalError(f"unknown methods {unknown}; use some of {', '.join(METHODS)}.")
    if len(names) < 3:
        raise NfevalError("the combinations need at least 3 methods.")
    if folds < 2 or repeats < 1:
        raise NfevalError(f"folds must be >= 2 and repeats >= 1, got {folds} and {repeats}.")
    src = Path(results)
    files = (src / "lk_t02.json", src / "lk_t02" / "per_candidate.csv")
    key = (str(src.resolve()), *((f.stat().st_mtime_ns, f.stat().st_size) for f in files),
           tuple(names), folds, repeats, fold_seed, alpha, limit)
    if key not in _FITTED:  # the folds' fits do not depend on the bootstrap seed
        _FITTED.clear()
        _FITTED[key] = _fit(src, names, folds=folds, repeats=repeats, fold_seed=fold_seed,
                            alpha=alpha, limit=limit)
    qs, dropped, fitted, moved, judge, frame = _FITTED[key]
    rows, choices, counts = [], [], {}
    for ds, questions in qs.items():
        per, ch = fitted[ds]
        picks = pd.DataFrame(ch)
        top = picks["rank_average"].value_counts()
        text = (f"rank average: {top.index[0]} in {int(top.iloc[0])} of {len(picks)} folds; "
                f"best single: {picks['best_single'].value_counts().index[0]}")
        rows += _rows(per, kind="out of sample", dataset=ds, seed=seed, key=f"oos/{ds}",
                      paper=_paper_best(ds), choice_text=text)
        choices.append(picks.assign(dataset=ds, kind="out of sample"))
        counts[ds] = len(questions)
        if progress:
            print(f"{ds}: {len(questions)} questions, {folds} folds x {repeats} repeats; {text}")
    for (a, b), (per, c) in moved.items():
        text = (f"chosen on {a}: rank average {'+'.join(names[i] for i in c.combo)}; best "
                f"single {names[c.single]}")
        rows += _rows(per, kind="transfer", dataset=f"{a} -> {b}", seed=seed,
                      key=f"transfer/{a}/{b}", paper=_paper_best(b), choice_text=text)
        choices.append(pd.DataFrame([{"best_single": names[c.single],
                                      "rank_average": "+".join(names[i] for i in c.combo),
                                      **{f"w_{m}": w for m, w in zip(names, c.weights)}}])
                       .assign(dataset=f"{a} -> {b}", kind="transfer"))
    table = pd.DataFrame(rows)
    table["judge_prompts"] = table["evaluator"].map(
        lambda e: "" if " - " in e else "see choices" if e in CHOSEN else _cost([e]))
    head = ["kind", "dataset", "evaluator", "coefficient", "ours", "ci_low", "ci_high",
            "n_questions"]
    table = table[[*head, *[c for c in table.columns if c not in head]]]
    return Experiment(
        id=ID, table=table, id_columns=["kind", "dataset", "evaluator", "coefficient"],
        interval="questions",
        signatures=[Signature(metric="combined-evaluator", variant="out-of-sample", seed=seed,
                              n=sum(counts.values()),
                              extra={"folds": folds, "repeats": repeats, "alpha": alpha,
                                     "methods": ",".join(names), "judge": judge,
                                     "source": "lk_t02/per_candidate.csv"})],
        parameters=dict(judge=judge, methods=names, folds=folds, repeats=repeats,
                        alpha=alpha),
        notes=NOTES, frames={"choices": pd.concat(choices, ignore_index=True)},
        summary_frames=("choices",),
        extra={"questions": counts, "dropped_candidates": dropped, "frame": frame,
               "methods": names, "cost": {m: METHODS[m] for m in names}})
