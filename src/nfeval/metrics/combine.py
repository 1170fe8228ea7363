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

Every sum these choices and the linear score rest on is exact (``math.fsum``: correctly
rounded, so independent of the order of summation) and the ridge system is solved by a
Cholesky factorization written out in Python floats, not by BLAS or LAPACK, whose kernels
(and so the last bits of a sum) differ between CPUs. Two candidates whose scores are equal
therefore get equal combined scores on every machine, a rank never flips between CPU kinds,
and a chosen combination or its held-out coefficient is the same to the last bit everywhere.

Each held-out question gets one value per repeat; its value is the mean over the repeats.
:func:`transfer` chooses and fits on every question of one set and scores another.
``nfeval meta`` uses these functions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nfeval.metrics.correlation import kendall_tau_b, pearson_r, spearman_rho

__all__ = ["ALPHA", "CHOSEN", "Choice", "CrossValidation", "Question", "choose", "coefficient", "fold_assignments",
           "linear_score", "out_of_sample", "question_values", "questions_of",
           "rank_combinations", "ridge_weights", "score_with", "transfer"]

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


def _fmean(values: np.ndarray) -> float:
    return math.fsum(values) / len(values)


def _z(x: np.ndarray) -> np.ndarray:
    """Each column z-standardized (population sd; a constant column gives 0), its mean and
    variance summed exactly: the same bits on every CPU."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for j in range(x.shape[1]):
        col = x[:, j]
        if not len(col):
            continue
        dev = col - _fmean(col)
        sd = math.sqrt(_fmean(dev * dev))
        if sd > 0 and not (col == col[0]).all():
            out[:, j] = dev / sd
    return out


def _gram(xs: np.ndarray, ys: np.ndarray) -> tuple[list[list[float]], list[float]]:
    """``xs.T @ xs`` and ``xs.T @ ys`` with every entry summed exactly (``math.fsum``)."""
    k = xs.shape[1]
    cols = [xs[:, j] for j in range(k)]
    gram = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1):
            gram[i][j] = gram[j][i] = math.fsum(cols[i] * cols[j])
    return gram, [math.fsum(c * ys) for c in cols]


def ridge_weights(xs: np.ndarray, ys: np.ndarray, alpha: float = ALPHA) -> tuple[float, ...]:
    """The ridge solution ``(X'X + alpha I) w = X'y``: exact sums, then a Cholesky
    factorization and two triangular solves in Python floats, in a fixed order (no BLAS, no
    LAPACK), so every CPU gets the same bits. ``alpha`` > 0 keeps the system positive
    definite whatever the inputs."""
    if alpha <= 0:
        raise ValueError(f"ridge alpha must be > 0, not {alpha}")
    gram, rhs = _gram(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    k = len(rhs)
    low = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1):
            acc = gram[i][j] + (alpha if i == j else 0.0) - math.fsum(
                low[i][m] * low[j][m] for m in range(j))
            low[i][j] = math.sqrt(acc) if i == j else acc / low[j][j]
    y = [0.0] * k
    for i in range(k):
        y[i] = (rhs[i] - math.fsum(low[i][m] * y[m] for m in range(i))) / low[i][i]
    w = [0.0] * k
    for i in reversed(range(k)):
        w[i] = (y[i] - math.fsum(low[m][i] * w[m] for m in range(i + 1, k))) / low[i][i]
    return tuple(w)


def linear_score(z: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """Each row of ``z`` (within-question z-scores) combined with ``weights``: a correctly
    rounded sum per row, so equal rows give equal scores on every CPU."""
    terms = np.asarray(z, dtype=float) * np.asarray(weights, dtype=float)
    return np.array([math.fsum(row) for row in terms], dtype=float)


def choose(train: Sequence[Question], values: np.ndarray, combos: Sequence[tuple[int, ...]],
           n_methods: int, alpha: float = ALPHA) -> Choice:
    """The choice made on the training questions only: ``values`` are their rows of
    :func:`question_values` (same order as ``train``); ties go to the first in order."""
    means = np.array([_nanmean_exact(values[:, j]) for j in range(values.shape[1])])
    means = np.where(np.isnan(means), -np.inf, means)
    single = int(np.argmax(means[:n_methods]))
    combo = combos[int(np.argmax(means[n_methods:]))] if combos else (single,)
    xs = np.concatenate([_z(q.scores) for q in train])
    ys = np.concatenate([_z(q.grades[:, None])[:, 0] for q in train])
    return Choice(single, tuple(combo), ridge_weights(xs, ys, alpha))


def _nanmean_exact(values: np.ndarray) -> float:
    """The mean of the finite values, summed exactly; NaN where there are none."""
    finite = values[np.isfinite(values)]
    return _fmean(finite) if len(finite) else math.nan


def score_with(choice: Choice, q: Question) -> dict[str, np.ndarray]:
    """The held-out question's scores under each chosen evaluator (grades not used)."""
    ranks = _rank_within(q.scores)
    return {"best single": q.scores[:, choice.single],
            "rank average": ranks[:, list(choice.combo)].mean(axis=1),
            "linear": linear_score(_z(q.scores), choice.weights)}


@dataclass(frozen=True)
class CrossValidation:
    """K-fold cross-validation by question, repeated: ``folds`` folds, ``repeats`` repeats,
    each fold assignment drawn from ``seed`` and the draw's name, ``prefix`` (the caller's,
    e.g. ``"meta"``) and ``key`` (what is split, e.g. a dataset)."""

    folds: int
    repeats: int
    seed: int
    key: str
    prefix: str


def fold_assignments(n: int, folds: int, seed: int, repeat: int, key: str,
                     prefix: str) -> np.ndarray:
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


def out_of_sample(questions: Sequence[Question], methods: Sequence[str], cv: CrossValidation,
                  *, alpha: float = ALPHA, fixed: Sequence[str] = (),
                  coefficients: Sequence[str] = ("spearman", "kendall")
                  ) -> tuple[dict, list[dict]]:
    """K-fold cross-validation by question, repeated (``cv``): per evaluator and coefficient
    each question's held-out value averaged over the repeats, and the choices made per
    fold."""
    combos = rank_combinations(len(methods))
    values = question_values(questions, combos)
    sums: dict = {}
    choices = []
    folds = cv.folds
    for r in range(cv.repeats):
        fold = fold_assignments(len(questions), folds, cv.seed, r, cv.key, cv.prefix)
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
        agg.setdefault(name, {}).setdefault(coef, {})[qid] = _nanmean_exact(
            np.asarray(vs, float))
    return agg, choices


def transfer(train_q: Sequence[Question], test_q: Sequence[Question], methods: Sequence[str],
             alpha: float = ALPHA, fixed: Sequence[str] = (),
             coefficients: Sequence[str] = ("spearman", "kendall")) -> tuple[dict, Choice]:
    """Choose and fit on every ``train_q`` question, score every ``test_q`` question."""
    combos = rank_combinations(len(methods))
    c = choose(train_q, question_values(train_q, combos), combos, len(methods), alpha)
    return _per_question(lambda i: c, test_q, list(methods), fixed, coefficients), c
