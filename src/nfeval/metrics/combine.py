"""A combined evaluator chosen on some questions and scored on others (out of sample).

Given per-candidate scores of several methods and human grades, a combination is scored
**out of sample**: the questions are split into folds (seeded, repeated), the combination is
chosen or fitted on the training folds only, and its per-question coefficient with the grades
is measured on the held-out fold. The procedure is fixed before any held-out grade is read:

* **best single** (the yardstick): the method with the highest mean per-question Spearman on
  the training questions;
* **rank average**: the mean of the per-question ranks of two or three methods; the pair or
  triple with the highest mean training Spearman is chosen;
* **linear**: scores z-standardized within each question (a constant score gives 0), grades
  likewise, and a ridge regression (``alpha``) of the grade on the methods fitted on the
  training candidates; the held-out score is the fitted combination.

Each held-out question gets one value per repeat; its value is the mean over the repeats.
:func:`transfer` chooses and fits on every question of one set and scores another.
``nfeval meta`` and the lk_x01 artefact use these functions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nfeval.metrics.correlation import kendall_tau_b, pearson_r, spearman_rho

__all__ = ["ALPHA", "CHOSEN", "Choice", "Question", "choose", "coefficient", "fold_assignments",
           "out_of_sample", "question_values", "questions_of", "rank_combinations",
           "score_with", "transfer"]

ALPHA = 1.0
#: The chosen evaluators, in their report order.
CHOSEN = ("best single", "rank average", "linear")


def _rank_within(values: np.ndarray) -> np.ndarray:
    return stats.rankdata(values, axis=0)


def coefficient(grades: np.ndarray, scores: np.ndarray, name: str) -> float:
    """One question's coefficient (NaN where the grades or the scores are constant)."""
    if np.ptp(grades) == 0 or np.ptp(scores) == 0:
        return math.nan
    if name == "spearman":
        return spearman_rho(grades, scores)
    if name == "pearson":
        return pearson_r(grades, scores)
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
class Question:
    """One question's candidates: grades, scores (candidates x methods) and ids."""

    dataset: str
    qid: str
    grades: np.ndarray
    scores: np.ndarray
    doc_ids: tuple[str, ...]


def questions_of(frame, methods: Sequence[str], group: str = "dataset") -> list[Question]:
    """The questions of a wide frame (``group``, ``qid``, ``doc_id``, ``grade`` and a column
    per method), in the frame's order."""
    out = []
    for (ds, qid), g in frame.groupby([group, "qid"], sort=False):
        out.append(Question(str(ds), str(qid), g["grade"].to_numpy(float),
                            g[list(methods)].to_numpy(float), tuple(g["doc_id"])))
    return out


def rank_combinations(n_methods: int, sizes: Sequence[int] = (2, 3)) -> list[tuple[int, ...]]:
    """Every pair and triple (by default) of method indices, in a fixed order."""
    return [c for k in sizes for c in itertools.combinations(range(n_methods), k)]


def question_values(questions: Sequence[Question], combos: Sequence[tuple[int, ...]]
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


def choose(train: Sequence[Question], values: np.ndarray, combos: Sequence[tuple[int, ...]],
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


def score_with(choice: Choice, q: Question) -> dict[str, np.ndarray]:
    """The held-out question's scores under each chosen evaluator (grades not used)."""
    ranks = _rank_within(q.scores)
    return {"best single": q.scores[:, choice.single],
            "rank average": ranks[:, list(choice.combo)].mean(axis=1),
            "linear": _z(q.scores) @ np.asarray(choice.weights)}


def fold_assignments(n: int, folds: int, seed: int, repeat: int, key: str,
                     prefix: str = "lk_x01") -> np.ndarray:
    """The fold of each of ``n`` questions in one repeat (a seeded permutation, then round
    robin); ``prefix`` and ``key`` name the draw."""
    from nfeval.hashing import derived_seed

    rng = np.random.default_rng(derived_seed(f"{prefix}/{seed}/{key}/{repeat}"))
    out = np.empty(n, dtype=int)
    out[rng.permutation(n)] = np.arange(n) % folds
    return out


def _per_question(choice_of: Callable[[int], Choice | None], questions: Sequence[Question],
                  methods: Sequence[str], fixed: Sequence[str], coefficients: Sequence[str]
                  ) -> dict[str, dict[str, dict[str, float]]]:
    """{evaluator: {coefficient: {qid: value}}} for the held-out questions, with the choice
    ``choice_of(i)`` of question i; ``fixed`` methods are scored beside the chosen ones."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for i, q in enumerate(questions):
        c = choice_of(i)
        if c is None:
            continue
        scored = {**score_with(c, q), **{f: q.scores[:, list(methods).index(f)] for f in fixed
                                         if f in methods}}
        for name, s in scored.items():
            for coef in coefficients:
                out.setdefault(name, {}).setdefault(coef, {})[q.qid] = coefficient(q.grades, s,
                                                                                   coef)
    return out


def out_of_sample(questions: Sequence[Question], methods: Sequence[str], *, folds: int,
                  repeats: int, seed: int, key: str, alpha: float = ALPHA,
                  fixed: Sequence[str] = (), coefficients: Sequence[str] = ("spearman", "kendall"),
                  prefix: str = "lk_x01") -> tuple[dict, list[dict]]:
    """K-fold cross-validation by question, repeated: per evaluator and coefficient each
    question's held-out value averaged over the repeats, and the choices made per fold."""
    combos = rank_combinations(len(methods))
    values = question_values(questions, combos)
    sums: dict = {}
    choices = []
    for r in range(repeats):
        fold = fold_assignments(len(questions), folds, seed, r, key, prefix)
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
        per = _per_question(picked.get, questions, list(methods), fixed, coefficients)
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


def transfer(train_q: Sequence[Question], test_q: Sequence[Question], methods: Sequence[str],
             alpha: float = ALPHA, fixed: Sequence[str] = (),
             coefficients: Sequence[str] = ("spearman", "kendall")) -> tuple[dict, Choice]:
    """Choose and fit on every ``train_q`` question, score every ``test_q`` question."""
    combos = rank_combinations(len(methods))
    c = choose(train_q, question_values(train_q, combos), combos, len(methods), alpha)
    return _per_question(lambda i: c, test_q, list(methods), fixed, coefficients), c
