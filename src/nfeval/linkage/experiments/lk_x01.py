"""lk_x01: beyond LINKAGE: a combined evaluator, chosen on some questions and judged on others.

Every per-candidate score of lk_t02's "same items" (the 1.5B judge's LINKAGE 0- and 3-shot,
pointwise with and without references, pairwise; ROUGE-1/2/L, BLEU, both BERTScores, the
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

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from nfeval import NfevalError
from nfeval.metrics.correlation import kendall_tau_b, spearman_rho
from nfeval.metrics.intervals import N_RESAMPLES, mean_interval, paired_difference
from nfeval.paths import RESULTS
from nfeval.results import Experiment, Signature, paper_values

__all__ = ["run"]

ID = "lk_x01"
#: The per-candidate scores combined (all oriented so that higher is better, as lk_t02 stores
#: them), with the judge prompts each costs per candidate ("r": one per reference).
METHODS: dict[str, str] = {
    "linkage-0shot": "1", "linkage-fewshot": "1", "pointwise-noref": "1",
    "pointwise-ref": "1", "pairwise": "r", "rouge1": "0", "rouge2": "0", "rougeL": "0",
    "bleu": "0", "bertscore": "0", "bertscore-cls": "0", "refppl": "0",
}
COEFFICIENTS = ("spearman", "kendall")
ALPHA = 1.0
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


def _rank_within(values: np.ndarray) -> np.ndarray:
    return stats.rankdata(values, axis=0)


def _coef(grades: np.ndarray, scores: np.ndarray, coefficient: str) -> float:
    if np.ptp(grades) == 0 or np.ptp(scores) == 0:
        return math.nan
    if coefficient == "spearman":
        return spearman_rho(grades, scores)
    return kendall_tau_b(grades, scores)


def _spearman_columns(grades: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Spearman of ``grades`` with each column of ``scores`` (NaN where a column is
    constant)."""
    rg = stats.rankdata(grades)
    rs = stats.rankdata(scores, axis=0)
    rg = rg - rg.mean()
    rs = rs - rs.mean(axis=0)
    den = np.sqrt((rg ** 2).sum() * (rs ** 2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (rg @ rs) / den
    out[den == 0] = np.nan
    return out


@dataclass(frozen=True)
class _Question:
    dataset: str
    qid: str
    grades: np.ndarray
    scores: np.ndarray  # candidates x methods
    doc_ids: tuple[str, ...]


def _questions(frame: pd.DataFrame, methods: Sequence[str]) -> list[_Question]:
    out = []
    for (ds, qid), g in frame.groupby(["dataset", "qid"], sort=False):
        out.append(_Question(str(ds), str(qid), g["grade"].to_numpy(float),
                             g[list(methods)].to_numpy(float), tuple(g["doc_id"])))
    return out


def rank_combinations(n_methods: int, sizes: Sequence[int] = (2, 3)) -> list[tuple[int, ...]]:
    """Every pair and triple (by default) of method indices, in a fixed order."""
    return [c for k in sizes for c in itertools.combinations(range(n_methods), k)]


def question_values(questions: Sequence[_Question], combos: Sequence[tuple[int, ...]]
                    ) -> np.ndarray:
    """Per question (rows) the Spearman of every single method and every rank average of
    ``combos`` (columns: the methods, then the combinations). Grades are not used to build
    the combinations, only to score them."""
    rows = []
    for q in questions:
        ranks = _rank_within(q.scores)
        combo = np.stack([ranks[:, list(c)].mean(axis=1) for c in combos], axis=1) \
            if combos else np.empty((len(q.grades), 0))
        rows.append(np.concatenate([_spearman_columns(q.grades, q.scores),
                                    _spearman_columns(q.grades, combo)]))
    return np.array(rows)


# --------------------------------------------------------------------------- choosing

@dataclass(frozen=True)
class Choice:
    """What the training questions chose: the best single method, the best rank average
    (method indices) and the ridge weights (per method, on within-question z-scores)."""

    single: int
    combo: tuple[int, ...]
    weights: tuple[float, ...]


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (x - x.mean(axis=0)) / sd
    return np.where(sd > 0, z, 0.0)


def choose(train: Sequence[_Question], values: np.ndarray, combos: Sequence[tuple[int, ...]],
           n_methods: int, alpha: float = ALPHA) -> Choice:
    """The choice made on the training questions only: ``values`` are their rows of
    :func:`question_values` (same order as ``train``); ties go to the first in order."""
    means = np.nanmean(values, axis=0) if len(values) else np.full(values.shape[1], np.nan)
    means = np.where(np.isnan(means), -np.inf, means)
    single = int(np.argmax(means[:n_methods]))
    combo = combos[int(np.argmax(means[n_methods:]))] if combos else (single,)
    xs = np.concatenate([_z(q.scores) for q in train])
    ys = np.concatenate([_z(q.grades[:, None])[:, 0] for q in train])
    w = np.linalg.solve(xs.T @ xs + alpha * np.eye(n_methods), xs.T @ ys)
    return Choice(single, tuple(combo), tuple(float(v) for v in w))


def score_with(choice: Choice, q: _Question) -> dict[str, np.ndarray]:
    """The held-out question's scores under each chosen evaluator (grades not used)."""
    ranks = _rank_within(q.scores)
    return {"best single": q.scores[:, choice.single],
            "rank average": ranks[:, list(choice.combo)].mean(axis=1),
            "linear": _z(q.scores) @ np.asarray(choice.weights)}


def fold_assignments(n: int, folds: int, seed: int, repeat: int, key: str) -> np.ndarray:
    """The fold of each of ``n`` questions in one repeat (a seeded permutation, then round
    robin)."""
    from nfeval.hashing import derived_seed

    rng = np.random.default_rng(derived_seed(f"{ID}/{seed}/{key}/{repeat}"))
    out = np.empty(n, dtype=int)
    out[rng.permutation(n)] = np.arange(n) % folds
    return out


FIXED = ("linkage-0shot", "bertscore")  # the fixed rows the chosen ones are set against
CHOSEN = ("best single", "rank average", "linear")


def _per_question(choice_of, questions, methods) -> dict[str, dict[str, dict[str, float]]]:
    """{evaluator: {coefficient: {qid: value}}} for the held-out questions, with the choice
    ``choice_of(i)`` of question i."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for i, q in enumerate(questions):
        c = choice_of(i)
        if c is None:
            continue
        scored = {**score_with(c, q), **{f: q.scores[:, methods.index(f)] for f in FIXED
                                         if f in methods}}
        for name, s in scored.items():
            for coef in COEFFICIENTS:
                out.setdefault(name, {}).setdefault(coef, {})[q.qid] = _coef(q.grades, s, coef)
    return out


def out_of_sample(questions: Sequence[_Question], methods: Sequence[str], *, folds: int,
                  repeats: int, seed: int, key: str, alpha: float = ALPHA
                  ) -> tuple[dict, list[dict]]:
    """K-fold cross-validation by question, repeated: per evaluator and coefficient each
    question's held-out value averaged over the repeats, and the choices made per fold."""
    combos = rank_combinations(len(methods))
    values = question_values(questions, combos)
    sums: dict = {}
    choices = []
    for r in range(repeats):
        fold = fold_assignments(len(questions), folds, seed, r, key)
        picked: dict[int, Choice] = {}
        for k in range(folds):
            train = [i for i in range(len(questions)) if fold[i] != k]
            c = choose([questions[i] for i in train], values[train], combos, len(methods),
                       alpha)
            choices.append({"repeat": r, "fold": k, "best_single": methods[c.single],
                            "rank_average": "+".join(methods[i] for i in c.combo),
                            **{f"w_{m}": w for m, w in zip(methods, c.weights)}})
            for i in range(len(questions)):
                if fold[i] == k:
                    picked[i] = c
        per = _per_question(picked.get, questions, list(methods))
        for name, by in per.items():
            for coef, vals in by.items():
                for qid, v in vals.items():
                    sums.setdefault((name, coef, qid), []).append(v)
    agg: dict = {}
    for (name, coef, qid), vs in sums.items():
        arr = np.asarray(vs, float)
        agg.setdefault(name, {}).setdefault(coef, {})[qid] = (
            float(np.nanmean(arr)) if np.isfinite(arr).any() else math.nan)
    return agg, choices


def transfer(train_q, test_q, methods, alpha: float = ALPHA) -> tuple[dict, Choice]:
    """Choose and fit on every ``train_q`` question, score every ``test_q`` question."""
    combos = rank_combinations(len(methods))
    c = choose(train_q, question_values(train_q, combos), combos, len(methods), alpha)
    return _per_question(lambda i: c, test_q, list(methods)), c


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


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0, folds: int = 5,
        repeats: int = 5, methods: str = ",".join(METHODS), alpha: float = ALPHA,
        progress: bool = True) -> Experiment:
    """The combined evaluator out of sample (parameters: the notebook's), from the committed
    ``results/lk_t02/per_candidate.csv``. ``limit`` > 0 keeps each dataset's first ``limit``
    questions (a smoke run)."""
    del profile  # every score is read from lk_t02's file; no model runs
    return evaluate(RESULTS, seed=seed, fold_seed=seed, limit=limit, folds=folds,
                    repeats=repeats, methods=methods, alpha=alpha, progress=progress)


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
    params = json.loads((src / "lk_t02.json").read_text())["parameters"]
    judge = str(params.get("judge") or "")
    per_candidate = pd.read_csv(src / "lk_t02" / "per_candidate.csv",
                                dtype={"qid": str, "doc_id": str, "mode": str,
                                       "our_judge": str})
    frame, dropped = candidate_frame(per_candidate, judge, names)
    qs = {ds: _questions(g, names) for ds, g in frame.groupby("dataset", sort=True)}
    if limit:
        qs = {ds: q[:limit] for ds, q in qs.items()}
    rows, choices, counts = [], [], {}
    for ds, questions in qs.items():
        if len(questions) < folds:
            raise NfevalError(f"{ds}: {len(questions)} questions, fewer than {folds} folds.")
        per, ch = out_of_sample(questions, names, folds=folds, repeats=repeats,
                                seed=fold_seed, key=ds, alpha=alpha)
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
    pairs = [(a, b) for a in qs for b in qs if a != b]
    for a, b in pairs:
        per, c = transfer(qs[a], qs[b], names, alpha)
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
        extra={"questions": counts, "dropped_candidates": dropped, "frame": frame,
               "methods": names, "cost": {m: METHODS[m] for m in names}})
