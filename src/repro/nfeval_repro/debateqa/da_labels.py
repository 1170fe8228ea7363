"""DebateQA Table 3 (D.A. against labels) with 95% intervals over questions.

DebateQA (EACL 2026, Section 5, Table 3) reports accuracy, F1, AUROC and
MCC of D.A. against human 0/1 labels. Our labelled answers come four to a
question (``data/debateqa_sample/``: balanced, one-sided, off-topic and
short answers to each of 40 questions), so they are not independent draws:
a judge that misreads a question misreads its four answers together. A
Wilson interval on the 160 answers would treat them as independent and be
too narrow. Every number here therefore gets a **cluster bootstrap over
questions** (:func:`nfeval.metrics.intervals.cluster_interval`): a resample
draws the questions with replacement, each with all its labelled answers,
and the statistic is recomputed on the answers drawn.

* :func:`binary_statistic` -- one of the four statistics on labels and
  scores, in numpy (the bootstrap evaluates it thousands of times), equal to
  :func:`nfeval.debateqa.da.da_metrics` (scikit-learn) on the same answers:
  predicted label ``score >= 0.5``; F1 of class 1 (0 where undefined); AUROC
  from the scores (ties count one half; NaN with one class); MCC (0 where
  undefined, as scikit-learn).
* :func:`question_units` -- a long per-answer frame (one row per answer and
  scoring method) as the bootstrap's units: one :class:`LabelledQuestion` per
  question.
* :func:`da_rows` -- each method's four statistics with their intervals.
* :func:`da_paired_rows` -- method A minus method B with a **paired**
  interval: each resample of questions is used for both methods, so what is
  resampled is the difference itself, on the answers both methods scored.

Answers a method left unscored (NaN: a generated reply without a 0/1 digit)
are left out of that method's statistics and counted (``n_unparsed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from nfeval.errors import NfevalError
from nfeval.metrics.intervals import (cluster_interval, doubled_tie_ranks, draw_counts,
                                      in_batches)
from nfeval.models.registry import DEFAULT_JUDGE

__all__ = [
    "DA_JUDGE_RUNS",
    "DA_STATISTICS",
    "DA_VALIDITY_JUDGES",
    "MODEL_FREE",
    "LabelledQuestion",
    "binary_statistic",
    "da_comparisons",
    "da_frame",
    "da_paired_rows",
    "da_rows",
    "question_units",
    "weighted_binary_statistic",
]

DA_STATISTICS = ("accuracy", "f1", "auroc", "mcc")
#: The judges of Table 3's evidence run in the embedded profile (both ship as GGUF).
DA_VALIDITY_JUDGES = ("qwen2.5-coder-0.5b-instruct", DEFAULT_JUDGE)
#: The rows a judge model scores: method -> :func:`nfeval.debateqa.da.da_scores` arguments.
DA_JUDGE_RUNS = {
    "da_prob": {"mode": "prob", "zero_shot": False},
    "da_zs_prob": {"mode": "prob", "zero_shot": True},
    "da_generate": {"mode": "generate", "zero_shot": False},
}
#: The ``judge`` value of the rows no model decides: ``da_official`` (the release
#: template's own digit) and ``acknowledge_rule`` (a phrase rule).
MODEL_FREE = "none"


def da_frame(results, **columns) -> pd.DataFrame:
    """:class:`nfeval.debateqa.da.DAResult` objects as rows ``key, score, raw`` plus
    ``columns`` (constants such as ``judge``, ``method``, ``backend``) in front."""
    rows = [{**columns, "key": r.id, "score": float(r.score), "raw": r.raw} for r in results]
    return pd.DataFrame(rows, columns=[*columns, "key", "score", "raw"])


def da_comparisons(judges: Sequence[str], methods: Sequence[str] = tuple(DA_JUDGE_RUNS),
                   reference: str = "acknowledge_rule") -> list[tuple[tuple, tuple]]:
    """Table 3's paired differences, as ``((judge, method), (judge, method))`` pairs.

    Every later judge minus the first on each probability row (``da_prob``,
    ``da_zs_prob``: the stronger judge against the default one), then every
    D.A. row (each judge's ``methods``, and ``da_official``) minus
    ``reference`` (the Acknowledge rule), then each judge's D.A. minus its D.A.-ZS (the
    paper's "necessity of including demonstrations"). A pair whose rows a run did not
    score gives no row (:func:`da_paired_rows`).
    """
    prob = [m for m in methods if DA_JUDGE_RUNS.get(m, {}).get("mode") == "prob"]
    pairs = [((j, m), (judges[0], m)) for j in judges[1:] for m in prob]
    pairs += [((j, m), (MODEL_FREE, reference)) for j in judges for m in methods]
    pairs += [((j, "da_prob"), (j, "da_zs_prob")) for j in judges
              if {"da_prob", "da_zs_prob"} <= set(methods)]
    pairs.append(((MODEL_FREE, "da_official"), (MODEL_FREE, reference)))
    return pairs


def binary_statistic(name: str, labels: Sequence[int], scores: Sequence[float]) -> float:
    """``accuracy``, ``f1``, ``auroc`` or ``mcc`` of 0/1 ``labels`` against ``scores``.

    Answers whose score is NaN are left out. NaN when no answer is left (and
    AUROC when only one class is). Equal to :func:`nfeval.debateqa.da.da_metrics`
    on the same answers (tests compare the two).
    """
    y = np.asarray(labels, dtype=float)
    s = np.asarray(scores, dtype=float)
    if y.shape != s.shape:
        raise NfevalError(f"{y.size} labels but {s.size} scores.")
    keep = ~np.isnan(s)
    y, s = y[keep].astype(bool), s[keep]
    if y.size == 0:
        return math.nan
    if name == "auroc":
        n1 = int(y.sum())
        n0 = y.size - n1
        if n1 == 0 or n0 == 0:
            return math.nan
        ranks = rankdata(s)  # ties get their mean rank: each tied pair counts one half
        return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))
    pred = s >= 0.5
    tp = float(np.sum(pred & y))
    tn = float(np.sum(~pred & ~y))
    fp = float(np.sum(pred & ~y))
    fn = float(np.sum(~pred & y))
    if name == "accuracy":
        return (tp + tn) / y.size
    if name == "f1":
        denom = 2 * tp + fp + fn
        return 2 * tp / denom if denom else 0.0
    if name == "mcc":
        denom = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
        return (tp * tn - fp * fn) / math.sqrt(denom) if denom else 0.0
    raise NfevalError(f"unknown statistic {name!r}; use one of {', '.join(DA_STATISTICS)}.")


@dataclass(frozen=True)
class LabelledQuestion:
    """One question's labelled answers: ``labels`` (n,) and ``scores`` (n, methods).

    Column ``j`` of ``scores`` holds the method ``methods[j]`` of the
    :func:`question_units` call that built it (NaN: not scored).
    """

    qid: Hashable
    labels: np.ndarray
    scores: np.ndarray


def question_units(frame: pd.DataFrame, *, by: Sequence[str] = ("method",), qid: str = "qid",
                   answer: str = "key", label: str = "label", score: str = "score"
                   ) -> tuple[list[LabelledQuestion], list[tuple]]:
    """The bootstrap units of a long per-answer frame, and the methods' keys.

    ``frame`` holds one row per answer and method: the ``by`` columns name
    the method (e.g. ``judge, method``), ``qid`` the question, ``answer`` the
    answer, ``label`` its 0/1 label and ``score`` the method's score.
    Returns one :class:`LabelledQuestion` per question (first-seen order) and
    the method keys (tuples of the ``by`` values, first-seen order) that
    index the columns of their ``scores``. A method that did not score an
    answer gets NaN there. An answer given two labels is an error.
    """
    by = list(by)
    need = {*by, qid, answer, label, score}
    if need - set(frame.columns):
        raise NfevalError(f"the frame lacks columns {sorted(need - set(frame.columns))}.")
    labels = frame.groupby([qid, answer], sort=False)[label].agg(["first", "nunique"])
    if (labels["nunique"] > 1).any():
        bad = labels.index[labels["nunique"] > 1][:3].tolist()
        raise NfevalError(f"answers with more than one label: {bad}.")
    keys = list(dict.fromkeys(frame[by].itertuples(index=False, name=None)))
    wide = frame.pivot_table(index=[qid, answer], columns=by, values=score, aggfunc="first",
                             dropna=False, sort=False)
    wide = wide.reindex(index=labels.index)
    wide.columns = [c if isinstance(c, tuple) else (c,) for c in wide.columns]
    wide = wide.reindex(columns=keys)
    values = wide.to_numpy(dtype=float)
    first = labels["first"].to_numpy()
    codes, qids = pd.factorize(wide.index.get_level_values(0))
    units = [LabelledQuestion(q, first[codes == i].astype(int), values[codes == i])
             for i, q in enumerate(qids)]
    bad = {int(v) for u in units for v in u.labels} - {0, 1}
    if bad:
        raise NfevalError(f"labels must be 0 or 1, got {sorted(bad)}.")
    return units, keys


def _statistic(name: str, j: int, other: int | None = None
               ) -> Callable[[Sequence[LabelledQuestion]], float]:
    """The statistic of method ``j`` on a list of units; with ``other``, method ``j``'s
    minus method ``other``'s, both on the answers that both scored."""

    def stat(units: Sequence[LabelledQuestion]) -> float:
        y = np.concatenate([u.labels for u in units])
        a = np.concatenate([u.scores[:, j] for u in units])
        if other is None:
            return binary_statistic(name, y, a)
        b = np.concatenate([u.scores[:, other] for u in units])
        both = ~(np.isnan(a) | np.isnan(b))
        return binary_statistic(name, y[both], a[both]) - binary_statistic(name, y[both], b[both])

    return stat


def weighted_binary_statistic(name: str, weights: np.ndarray, labels: np.ndarray,
                              scores: np.ndarray) -> np.ndarray:
    """:func:`binary_statistic` of many weighted copies of one answer set at once.

    ``weights`` (resamples x answers) counts how often each answer is drawn
    (a cluster bootstrap's resample); ``labels`` and ``scores`` (no NaN) are
    the answers'. Every count, rank sum and product is an integer (or a half)
    summed exactly, then divided as :func:`binary_statistic` divides, so each
    value is the one it gives on the resample's answers, to the last bit.
    """
    w = np.asarray(weights, dtype=np.int64)
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    n = w.sum(axis=1)
    if name not in DA_STATISTICS:
        raise NfevalError(f"unknown statistic {name!r}; use one of {', '.join(DA_STATISTICS)}.")
    if s.size == 0:
        return np.full(len(w), np.nan)
    if name == "auroc":
        n1 = w[:, y].sum(axis=1)
        n0 = n - n1
        group, ranks = doubled_tie_ranks(s, w)
        # twice the positives' rank sum: integers, so exact in any order
        twice = np.sum((w * y) * ranks[:, group], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (twice / 2 - n1 * (n1 + 1) / 2) / (n1 * n0)
        return np.where((n1 > 0) & (n0 > 0), out, np.nan)
    pred = s >= 0.5
    tp, tn, fp, fn = (np.sum(w * m, axis=1).astype(float) for m in
                      (pred & y, ~pred & ~y, pred & ~y, ~pred & y))
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "accuracy":
            out = (tp + tn) / n
        elif name == "f1":
            denom = 2 * tp + fp + fn
            out = np.where(denom != 0, 2 * tp / np.where(denom != 0, denom, 1.0), 0.0)
        else:  # mcc
            denom = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
            out = np.where(denom != 0, (tp * tn - fp * fn) / np.sqrt(np.where(denom != 0, denom,
                                                                              1.0)), 0.0)
    return np.where(n > 0, out, np.nan)


def _vectorized(units: Sequence[LabelledQuestion], name: str, j: int, other: int | None = None
                ) -> Callable[[np.ndarray], np.ndarray] | None:
    """:func:`_statistic` of every resample at once (``draws``: resamples x questions)."""
    if not units:
        return None
    unit_of = np.concatenate([np.full(len(u.labels), i) for i, u in enumerate(units)])
    y = np.concatenate([u.labels for u in units]).astype(bool)
    a = np.concatenate([u.scores[:, j] for u in units])
    b = np.concatenate([u.scores[:, other] for u in units]) if other is not None else a
    keep = ~(np.isnan(a) | np.isnan(b))
    unit_of, y, a, b = unit_of[keep], y[keep], a[keep], b[keep]

    def step(draws: np.ndarray) -> np.ndarray:
        w = draw_counts(draws, len(units))[:, unit_of]
        v = weighted_binary_statistic(name, w, y, a)
        return v if other is None else v - weighted_binary_statistic(name, w, y, b)

    return lambda draws: in_batches(step, draws)


def _key(by: Sequence[str], key: tuple) -> str:
    return "/".join(f"{b}={v}" for b, v in zip(by, key))


def da_rows(frame: pd.DataFrame, *, by: Sequence[str] = ("method",), seed: int = 0,
            statistics: Sequence[str] = DA_STATISTICS, **columns) -> pd.DataFrame:
    """Each method's statistics with a 95% cluster-bootstrap interval over questions.

    ``frame`` as :func:`question_units` reads it (``columns`` rename its
    ``qid``/``answer``/``label``/``score`` columns). Rows: ``by...,
    statistic, ours, ci_low, ci_high, n_questions`` (questions resampled),
    ``n_answers`` (answers scored), ``n_unparsed`` (answers not scored),
    ``n_undefined`` (resamples on which the statistic was undefined, left out
    of the percentiles: AUROC on a resample with one class).
    """
    units, keys = question_units(frame, by=by, **columns)
    rows = []
    for j, key in enumerate(keys):
        col = np.concatenate([u.scores[:, j] for u in units]) if units else np.array([])
        scored = int((~np.isnan(col)).sum())
        for name in statistics:
            iv = cluster_interval(units, _statistic(name, j), seed=seed,
                                  key=f"da/{_key(by, key)}/{name}",
                                  vectorized=_vectorized(units, name, j))
            rows.append({**dict(zip(by, key)), "statistic": name, **iv.columns(),
                         "n_answers": scored, "n_unparsed": int(col.size - scored),
                         "n_undefined": iv.n_undefined})
    return pd.DataFrame(rows, columns=[*by, "statistic", "ours", "ci_low", "ci_high",
                                       "n_questions", "n_answers", "n_unparsed", "n_undefined"])


def da_paired_rows(frame: pd.DataFrame, pairs: Sequence[tuple[tuple, tuple]], *,
                   by: Sequence[str] = ("method",), seed: int = 0,
                   statistics: Sequence[str] = DA_STATISTICS, **columns) -> pd.DataFrame:
    """Method A minus method B, both on the same resampled questions (paired 95% interval).

    ``pairs``: ``(key_a, key_b)`` with keys as tuples of the ``by`` values
    (a one-column ``by`` also takes plain values). Both statistics are taken
    on the answers both methods scored, so the difference is not that of two
    rows of :func:`da_rows` when a method left answers unscored. A ``by``
    column that differs between A and B reads ``"a - b"``. Rows: ``by...,
    statistic, ours, ci_low, ci_high, n_questions, n_answers`` (scored by
    both), ``a_value``, ``b_value`` (the two statistics on those answers),
    ``n_undefined``.
    """
    units, keys = question_units(frame, by=by, **columns)
    index = {k: j for j, k in enumerate(keys)}
    rows = []
    for a, b in pairs:
        a = a if isinstance(a, tuple) else (a,)
        b = b if isinstance(b, tuple) else (b,)
        missing = [k for k in (a, b) if k not in index]
        if missing:
            raise NfevalError(f"no scores for {missing}; the frame has {keys}.")
        ja, jb = index[a], index[b]
        label = {c: (va if va == vb else f"{va} - {vb}") for c, va, vb in zip(by, a, b)}
        if units:
            y = np.concatenate([u.labels for u in units])
            sa = np.concatenate([u.scores[:, ja] for u in units])
            sb = np.concatenate([u.scores[:, jb] for u in units])
        else:
            y = sa = sb = np.array([])
        both = ~(np.isnan(sa) | np.isnan(sb))
        for name in statistics:
            iv = cluster_interval(units, _statistic(name, ja, jb), seed=seed,
                                  key=f"da/{_key(by, a)} - {_key(by, b)}/{name}",
                                  vectorized=_vectorized(units, name, ja, jb))
            rows.append({**label, "statistic": name, **iv.columns(),
                         "n_answers": int(both.sum()),
                         "a_value": binary_statistic(name, y[both], sa[both]),
                         "b_value": binary_statistic(name, y[both], sb[both]),
                         "n_undefined": iv.n_undefined})
    return pd.DataFrame(rows, columns=[*by, "statistic", "ours", "ci_low", "ci_high",
                                       "n_questions", "n_answers", "a_value", "b_value",
                                       "n_undefined"])
