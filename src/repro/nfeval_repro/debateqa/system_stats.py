"""95% intervals for the DebateQA "systems" tables, and how stable their rankings are.

The DebateQA notebooks dq_t04-dq_f10 and dq_t06-dq_t07 score *systems* (sets
of answers to the same questions, :mod:`nfeval_repro.debateqa.systems`) and report means,
differences between them, rankings and agreements between evaluators. Every
number here resamples **questions** (the unit the paper's questions stand
for): a question is drawn with all its answers, since the answers to one
question share its partial answers and are not independent
(:mod:`nfeval.metrics.intervals`).

* :func:`mean_rows` -- the mean per group (one score per question and group,
  or several averaged per question first) with a percentile bootstrap over
  questions; :func:`difference_rows` -- paired differences between two
  levels of one column (same questions for both); :func:`mean_and_difference_rows`
  -- both in one long table, with a ``quantity`` column.
* :func:`system_correlation` -- a correlation *over systems* between their
  mean scores under two evaluators (Kendall's tau between two rankings, the
  paper's Figures 3-4; Spearman/Pearson between P.D. and D.A., its Figure 6),
  with a cluster bootstrap: each resample draws questions, recomputes every
  system's means and the correlation.
* :func:`answer_correlation` -- per-answer agreement: the correlation between
  two evaluators' scores of the *same answers*, pooled over all answers, with
  the same cluster bootstrap; :func:`within_question_correlation` -- the mean
  over questions of that correlation among one question's answers (what is
  left once the question's own level, e.g. its number of partial answers,
  which moves P.D. for every backbone, is taken out).
* :func:`stability_rows` -- all of the above for every pair of evaluators,
  on all systems and on the model systems alone (the written answer sets of
  the sample are built to differ, so a ranking tau over all systems is
  carried by them).
* :func:`decision_agreement_rows` -- D.A. judges: raw agreement and Cohen's
  kappa of the 0/1 decisions, per-answer Spearman of P("1"), per pair.
* :func:`combined_rows` -- the paper's Figure 7 score k * Z(-P.D.) + Z(D.A.)
  per system with its interval, and the rank it gives.

The score frames are :func:`nfeval_repro.debateqa.systems.score_systems`'s long tables
(``system, id, metric, evaluator, score``); ``id`` is the question.
Beyond the paper: the paper reports none of these intervals.

Why this file is long: every interval of the answering-system tables (means, paired
differences, ratios, the correlations between evaluators, decision agreement, the combined
ranking) shares one cluster-bootstrap helper and one score matrix; the functions are short.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.metrics.intervals import (Interval, cluster_interval, doubled_tie_ranks, draw_counts,
                                      in_batches, mean_interval, paired_difference)

__all__ = [
    "WRITTEN_PREFIX",
    "answer_correlation",
    "cohen_kappa",
    "combined_rows",
    "decision_agreement_rows",
    "difference_rows",
    "fast_correlation",
    "mean_and_difference_rows",
    "mean_rows",
    "model_systems",
    "ratio_rows",
    "score_matrix",
    "stability_rows",
    "system_correlation",
    "within_question_correlation",
]

#: the sample's written answer sets (:func:`nfeval_repro.debateqa.systems.collect_systems`)
WRITTEN_PREFIX = "written:"
UNIT = "questions"
Selector = tuple[str, str]  # (metric, evaluator)


def model_systems(systems: Iterable[str]) -> list[str]:
    """The systems a model generated: every name but the sample's ``written:<set>`` ones."""
    return [s for s in systems if not str(s).startswith(WRITTEN_PREFIX)]


def _key(*parts: object) -> str:
    return "|".join(str(p) for p in parts)


def _row(iv: Interval, **extra) -> dict:
    return {**extra, **iv.columns(), "n_undefined": iv.n_undefined}


# --------------------------------------------------------------------------- means

def mean_rows(frame: pd.DataFrame, by: Sequence[str], *, value: str = "score",
              unit_col: str = "id", seed: int = 0, key: str = "") -> pd.DataFrame:
    """Mean of ``value`` per ``by`` group with a bootstrap interval over questions.

    Several rows of one question in a group are averaged first (the question is
    the unit); NaN values are left out. Columns: ``by``, ``ours``, ``ci_low``,
    ``ci_high``, ``n_questions`` (questions with a value). Each row's interval
    is seeded by ``seed``, ``key`` and the row's identifiers.
    """
    by = list(by)
    if frame.empty:
        return pd.DataFrame(columns=by + ["ours", "ci_low", "ci_high", f"n_{UNIT}"])
    per_q = frame.groupby(by + [unit_col], sort=False, dropna=False)[value].mean().reset_index()
    rows = []
    for ident, sub in per_q.groupby(by, sort=False, dropna=False):
        ident = ident if isinstance(ident, tuple) else (ident,)
        iv = mean_interval(sub[value].to_numpy(dtype=float), seed=seed,
                           key=_key("mean", key, *ident), unit=UNIT)
        rows.append({**dict(zip(by, ident)), **iv.columns()})
    return pd.DataFrame(rows)


def difference_rows(frame: pd.DataFrame, by: Sequence[str], *, column: str,
                    pairs: Sequence[tuple[str, str]], value: str = "score",
                    unit_col: str = "id", seed: int = 0, key: str = "") -> pd.DataFrame:
    """Paired differences ``a - b`` between two levels of ``column``, per ``by`` group.

    For each group and pair, the mean over the questions scored under both of
    the per-question difference, with a paired bootstrap (the same resampled
    questions for both; :func:`nfeval.metrics.intervals.paired_difference`).
    ``column`` holds ``"a - b"`` in the result.
    """
    by = [c for c in by if c != column]
    per_q = frame.groupby(by + [column, unit_col], sort=False, dropna=False)[value].mean()
    per_q = per_q.dropna().reset_index()
    rows = []
    groups = per_q.groupby(by, sort=False, dropna=False) if by else [((), per_q)]
    for ident, sub in groups:
        ident = ident if isinstance(ident, tuple) else (ident,)
        for a, b in pairs:
            va = sub[sub[column] == a].set_index(unit_col)[value].to_dict()
            vb = sub[sub[column] == b].set_index(unit_col)[value].to_dict()
            if not va or not vb:
                continue
            iv = paired_difference(va, vb, seed=seed, key=_key("diff", key, *ident, a, b),
                                   unit=UNIT)
            rows.append({**dict(zip(by, ident)), column: f"{a} - {b}", **iv.columns()})
    return pd.DataFrame(rows, columns=by + [column, "ours", "ci_low", "ci_high", f"n_{UNIT}"])


def mean_and_difference_rows(frame: pd.DataFrame, by: Sequence[str], *, column: str,
                              pairs: Sequence[tuple[str, str]], seed: int = 0) -> pd.DataFrame:
    """:func:`mean_rows` per ``by`` group (``quantity`` "mean"), then
    :func:`difference_rows` of ``pairs`` of ``column`` (``quantity`` "difference";
    left out when there are no pairs): the long table of an analysis that compares
    settings on the same questions."""
    parts = [mean_rows(frame, by, seed=seed).assign(quantity="mean")]
    if pairs:
        parts.append(difference_rows(frame, by, column=column, pairs=list(pairs), seed=seed)
                     .assign(quantity="difference"))
    return pd.concat(parts, ignore_index=True)


def ratio_rows(frame: pd.DataFrame, by: Sequence[str], *, numerator: str, denominator: str,
               unit_col: str = "id", seed: int = 0, key: str = "") -> pd.DataFrame:
    """``sum(numerator) / sum(denominator)`` per group (e.g. the share of retrieved
    chunks that are trusted) with a cluster bootstrap over questions; NaN where the
    denominator sums to 0."""
    by = list(by)
    rows = []
    for ident, sub in frame.groupby(by, sort=False, dropna=False):
        ident = ident if isinstance(ident, tuple) else (ident,)
        per_q = sub.groupby(unit_col, sort=True)[[numerator, denominator]].sum()
        num, den = per_q[numerator].to_numpy(float), per_q[denominator].to_numpy(float)

        def stat(sel, num=num, den=den):
            d = den[np.asarray(sel)].sum()
            return num[np.asarray(sel)].sum() / d if d > 0 else math.nan

        iv = cluster_interval(list(range(len(num))), stat, seed=seed,
                              key=_key("ratio", key, *ident), unit=UNIT)
        rows.append({**dict(zip(by, ident)), **iv.columns()})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- matrices

def score_matrix(scores: pd.DataFrame, selector: Selector, *, systems: Sequence[str],
                 qids: Sequence) -> np.ndarray:
    """Scores under ``selector`` = (metric, evaluator) as a questions x systems array
    (rows ``qids``, columns ``systems``; NaN where an answer has no score)."""
    metric, evaluator = selector
    sub = scores[(scores["metric"] == metric) & (scores["evaluator"] == evaluator)]
    piv = sub.pivot_table(index="id", columns="system", values="score", aggfunc="mean")
    return piv.reindex(index=list(qids), columns=list(systems)).to_numpy(dtype=float)


def _pair(scores: pd.DataFrame, x: Selector, y: Selector, systems: Sequence[str] | None
          ) -> tuple[list, list[str], np.ndarray, np.ndarray]:
    """Questions, systems and the two aligned matrices of a pair of selectors."""
    def part(sel):
        return scores[(scores["metric"] == sel[0]) & (scores["evaluator"] == sel[1])]

    px, py = part(x), part(y)
    if px.empty or py.empty:
        raise NfevalError(f"no scores for {x if px.empty else y} (metric, evaluator)")
    common = [s for s in dict.fromkeys(px["system"]) if s in set(py["system"])]
    if systems is not None:
        common = [s for s in common if s in set(systems)]
    qids = sorted(set(px["id"]) | set(py["id"]))
    return (qids, common, score_matrix(scores, x, systems=common, qids=qids),
            score_matrix(scores, y, systems=common, qids=qids))


def _means(m: np.ndarray, rows: np.ndarray) -> np.ndarray:
    part = m[rows]
    count = np.sum(~np.isnan(part), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.nansum(part, axis=0) / np.maximum(count, 1), np.nan)


def _batch_means(m: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """:func:`_means` of every row of ``draws`` at once (``len(draws) x`` columns), summed in
    the same order, so each value is the same to the last bit."""
    part = m[draws]
    count = np.sum(~np.isnan(part), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.nansum(part, axis=1) / np.maximum(count, 1), np.nan)


def _batch_kendall_b(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`fast_correlation`'s Kendall tau-b of every row pair of ``a`` and ``b`` at once
    (pairs where either side is NaN left out, NaN where fewer than two remain or a side is
    constant); the sums are of integers, so the values are those of the loop exactly."""
    valid = ~(np.isnan(a) | np.isnan(b))
    both = valid[:, :, None] & valid[:, None, :]
    with np.errstate(invalid="ignore"):
        sa = np.where(both, np.sign(a[:, :, None] - a[:, None, :]), 0.0)
        sb = np.where(both, np.sign(b[:, :, None] - b[:, None, :]), 0.0)
    num = np.sum(sa * sb, axis=(1, 2))
    den = np.sqrt(np.sum(sa * sa, axis=(1, 2)) * np.sum(sb * sb, axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.where(valid.sum(axis=1) >= 2, out, np.nan)


def _twice_centred_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each answer's ``2 * rank - (N + 1)`` in every resample (``w``: resamples x answers,
    how often each answer is drawn; ``N`` the answers drawn): average ranks of ties, as
    :func:`_average_ranks` gives on the resample's answers, doubled so they are integers."""
    group, ranks = doubled_tie_ranks(x, w)
    return ranks[:, group] - (w.sum(axis=1) + 1)[:, None]


def kendall_blocks(mx: np.ndarray, my: np.ndarray) -> list[np.ndarray]:
    """The pair counts :func:`_batch_answer_correlation`'s Kendall sums over, between every
    two questions (the sum over answers i of one, j of the other, of the sign products of
    x-x, x-y and y-y): they do not depend on the resample, so a caller that bootstraps in
    batches computes them once."""
    valid = ~(np.isnan(mx) | np.isnan(my))
    q, col = np.nonzero(valid)
    a, b = mx[q, col], my[q, col]
    onehot = np.zeros((a.size, mx.shape[0]), dtype=np.int64)
    onehot[np.arange(a.size), q] = 1
    blocks = []
    for x, z in ((a, b), (a, a), (b, b)):
        sx = np.sign(x[:, None] - x[None, :]).astype(np.int64)
        sz = sx if z is x else np.sign(z[:, None] - z[None, :]).astype(np.int64)
        blocks.append(onehot.T @ (sx * sz) @ onehot)
    return blocks


def _batch_answer_correlation(mx: np.ndarray, my: np.ndarray, draws: np.ndarray,
                              method: str, blocks: list[np.ndarray] | None = None
                              ) -> np.ndarray:
    """:func:`fast_correlation` of the pooled answers of every resample of questions at once
    (``draws``: resamples x questions), Kendall or Spearman. Ranks, sign products and their
    sums are integers (or halves, quarters) summed exactly, then divided as the loop
    divides, so each value is the loop's to the last bit. ``blocks``: Kendall's
    :func:`kendall_blocks` of ``mx``, ``my``, when the caller has them."""
    valid = ~(np.isnan(mx) | np.isnan(my))
    q, col = np.nonzero(valid)
    a, b = mx[q, col], my[q, col]
    counts = draw_counts(draws, mx.shape[0])
    w = counts[:, q]
    drawn = w.sum(axis=1)
    if method == "kendall":
        # pair counts between questions: sum over answers i of q, j of r of sign products
        blocks = kendall_blocks(mx, my) if blocks is None else blocks
        num, saa, sbb = (np.einsum("bq,qr,br->b", counts, m, counts) for m in blocks)
        num, den = num.astype(float), np.sqrt(saa.astype(float) * sbb.astype(float))
    elif method == "spearman":
        ra, rb = _twice_centred_ranks(a, w), _twice_centred_ranks(b, w)
        num = np.sum(w * ra * rb, axis=1) / 4  # = da @ db of the loop, exactly
        den = np.sqrt((np.sum(w * ra * ra, axis=1) / 4) * (np.sum(w * rb * rb, axis=1) / 4))
    else:
        raise NfevalError(f"no vectorized {method!r}; use kendall or spearman")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.where(drawn >= 2, out, np.nan)


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    da, db = a - a.mean(), b - b.mean()
    den = math.sqrt(float(da @ da) * float(db @ db))
    return float(da @ db) / den if den > 0 else math.nan


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given their average rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], x.size]
    ranks = np.empty(x.size)
    ranks[order] = ((starts + ends + 1) / 2)[np.cumsum(first) - 1]
    return ranks


def _kendall_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b (scipy's default) from the signs of all pairs: O(n^2), fast for
    the few hundred answers a resample holds."""
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    den = math.sqrt(float(np.sum(sa * sa)) * float(np.sum(sb * sb)))
    return float(np.sum(sa * sb)) / den if den > 0 else math.nan


def fast_correlation(a: Sequence[float], b: Sequence[float], method: str) -> float:
    """Kendall's tau-b, Spearman's rho or Pearson's r of the pairs where both are
    finite; NaN where undefined (fewer than two pairs, a constant side). The same
    values as scipy's (tested), without its per-call overhead: a cluster bootstrap
    calls it thousands of times."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if a.size < 2:
        return math.nan
    if method == "kendall":
        return _kendall_b(a, b)
    if method == "spearman":
        return _pearson(_average_ranks(a), _average_ranks(b))
    if method == "pearson":
        return _pearson(a, b)
    raise NfevalError(f"unknown correlation {method!r}; use kendall, spearman or pearson")


_corr = fast_correlation


def _cluster(n: int, stat: Callable[[np.ndarray], float], *, seed: int, key: str,
             vectorized: Callable[[np.ndarray], np.ndarray] | None = None) -> Interval:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cluster_interval(list(range(n)), lambda sel: stat(np.asarray(sel, dtype=int)),
                                seed=seed, key=key, unit=UNIT, vectorized=vectorized)




# --------------------------------------------------------------------------- correlations

def system_correlation(scores: pd.DataFrame, x: Selector, y: Selector, *,
                       method: str = "kendall", systems: Sequence[str] | None = None,
                       seed: int = 0, key: str = "") -> dict:
    """Correlation over systems between their mean scores under ``x`` and ``y``.

    ``method="kendall"`` between two evaluators of one metric is Kendall's
    tau-b between the two rankings of the systems (Figures 3-4). The interval
    is a cluster bootstrap over questions: a resample draws questions with
    all their answers and recomputes every system's two means and the
    correlation; resamples where it is undefined (fewer than two systems,
    constant means) are dropped and counted (``n_undefined``). ``systems``
    restricts the systems (default: every system scored under both).

    Returns ``ours, ci_low, ci_high, n_questions, n_undefined, n_systems, n_answers``
    (the answers scored under both that the means rest on).
    """
    qids, names, mx, my = _pair(scores, x, y, systems)
    everything = np.arange(len(qids))
    ok = ~(np.isnan(_means(mx, everything)) | np.isnan(_means(my, everything)))
    n_answers = int((~(np.isnan(mx) | np.isnan(my))).sum())

    def stat(rows: np.ndarray) -> float:
        return _corr(_means(mx, rows), _means(my, rows), method)

    def every(draws: np.ndarray) -> np.ndarray:  # Kendall: all resamples at once, same values
        return in_batches(lambda d: _batch_kendall_b(_batch_means(mx, d), _batch_means(my, d)),
                          draws)

    if ok.sum() < 2:
        iv = Interval(math.nan, math.nan, math.nan, len(qids), UNIT)
    else:
        iv = _cluster(len(qids), stat, seed=seed, key=_key("systems", method, key, x, y),
                      vectorized=every if method == "kendall" else None)
    return _row(iv, n_systems=int(ok.sum()), n_answers=n_answers)


def answer_correlation(scores: pd.DataFrame, x: Selector, y: Selector, *,
                       method: str = "spearman", systems: Sequence[str] | None = None,
                       seed: int = 0, key: str = "") -> dict:
    """Per-answer agreement: the correlation between the ``x`` and ``y`` scores of the
    same answers, pooled over every answer (system, question) scored under both,
    with a cluster bootstrap over questions (a resample draws questions with all
    their answers). Returns ``ours, ci_low, ci_high, n_questions, n_undefined,
    n_systems, n_answers``."""
    qids, names, mx, my = _pair(scores, x, y, systems)
    both = ~(np.isnan(mx) | np.isnan(my))

    def stat(rows: np.ndarray) -> float:
        return _corr(mx[rows].ravel(), my[rows].ravel(), method)

    def every(draws: np.ndarray) -> np.ndarray:  # all resamples at once, the same values
        blocks = kendall_blocks(mx, my) if method == "kendall" else None
        return in_batches(lambda d: _batch_answer_correlation(mx, my, d, method, blocks),
                          draws)

    iv = _cluster(len(qids), stat, seed=seed, key=_key("answers", method, key, x, y),
                  vectorized=every if method in ("kendall", "spearman") else None)
    return _row(iv, n_systems=int(both.any(axis=0).sum()), n_answers=int(both.sum()))


def within_question_correlation(scores: pd.DataFrame, x: Selector, y: Selector, *,
                                method: str = "spearman",
                                systems: Sequence[str] | None = None, seed: int = 0,
                                key: str = "") -> dict:
    """Mean over questions of the correlation between the ``x`` and ``y`` scores of one
    question's answers (one per system), with a bootstrap over questions. Questions
    where it is undefined (fewer than two answers, constant scores) are left out and
    counted in ``n_undefined``. Returns the columns of :func:`answer_correlation`."""
    qids, names, mx, my = _pair(scores, x, y, systems)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_q = np.array([_corr(mx[i], my[i], method) for i in range(len(qids))])
    iv = mean_interval(per_q, seed=seed, key=_key("within", method, key, x, y), unit=UNIT)
    both = ~(np.isnan(mx) | np.isnan(my))
    return {**iv.columns(), "n_undefined": int(np.isnan(per_q).sum()),
            "n_systems": int(both.any(axis=0).sum()), "n_answers": int(both.sum())}


STABILITY_QUANTITIES = ("ranking_kendall", "answer_spearman", "answer_kendall",
                        "within_question_spearman")


def stability_rows(scores: pd.DataFrame, metric: str, evaluators: Sequence[str] | None = None,
                   *, scopes: Sequence[str] = ("all", "models"), seed: int = 0,
                   quantities: Sequence[str] = STABILITY_QUANTITIES) -> pd.DataFrame:
    """How much two evaluators of ``metric`` agree, for every pair of ``evaluators``.

    Per pair and scope (``all`` systems, or the ``models``: the generated
    answers without the sample's written sets) four quantities
    (:data:`STABILITY_QUANTITIES`): Kendall's tau between the two rankings of
    the systems by mean score (:func:`system_correlation`), Spearman and
    Kendall between the two scores of the same answers pooled over all answers
    (:func:`answer_correlation`), and the mean over questions of Spearman among
    one question's answers (:func:`within_question_correlation`). Columns
    ``a, b, scope, quantity, ours, ci_low, ci_high, n_questions, n_undefined,
    n_systems, n_answers``. ``quantities`` computes only some of them (the same rows).
    """
    unknown = set(quantities) - set(STABILITY_QUANTITIES)
    if unknown:
        raise NfevalError(f"unknown quantities {sorted(unknown)}; use {STABILITY_QUANTITIES}")
    sub = scores[scores["metric"] == metric]
    evs = list(evaluators) if evaluators is not None else list(dict.fromkeys(sub["evaluator"]))
    everyone = list(dict.fromkeys(sub["system"]))
    rows = []
    for i, a in enumerate(evs):
        for b in evs[i + 1:]:
            x, y = (metric, a), (metric, b)
            for scope in scopes:
                if scope not in ("all", "models"):
                    raise NfevalError(f"unknown scope {scope!r}; use 'all' or 'models'")
                names = everyone if scope == "all" else model_systems(everyone)
                if not names:
                    continue
                k = _key(scope, metric)
                common = dict(a=a, b=b, scope=scope)
                if "ranking_kendall" in quantities:
                    rows.append({**common, "quantity": "ranking_kendall",
                                 **system_correlation(sub, x, y, method="kendall",
                                                      systems=names, seed=seed, key=k)})
                for method in ("spearman", "kendall"):
                    if f"answer_{method}" in quantities:
                        rows.append({**common, "quantity": f"answer_{method}",
                                     **answer_correlation(sub, x, y, method=method,
                                                          systems=names, seed=seed, key=k)})
                if "within_question_spearman" in quantities:
                    rows.append({**common, "quantity": "within_question_spearman",
                                 **within_question_correlation(sub, x, y, method="spearman",
                                                               systems=names, seed=seed,
                                                               key=k)})
    cols = ["a", "b", "scope", "quantity", "ours", "ci_low", "ci_high", f"n_{UNIT}",
            "n_undefined", "n_systems", "n_answers"]
    return pd.DataFrame(rows).reindex(columns=cols)


# --------------------------------------------------------------------------- D.A. decisions

def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 decision vectors; NaN when chance agreement is 1 (both
    constant and equal), where it is undefined (sklearn returns NaN there too)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0:
        return math.nan
    po = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1 - pa) * (1 - pb)
    return (po - pe) / (1 - pe) if pe < 1 else math.nan


def _batch_decisions(ma: np.ndarray, mb: np.ndarray, draws: np.ndarray, threshold: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The agreement and :func:`cohen_kappa` of the two decisions on the answers both judged,
    in every resample of questions at once (counts divided as the loop divides: the same
    values to the last bit)."""
    q, col = np.nonzero(~(np.isnan(ma) | np.isnan(mb)))
    da, db = ma[q, col] >= threshold, mb[q, col] >= threshold
    w = draw_counts(draws, ma.shape[0])[:, q]
    n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.sum(w * (da == db), axis=1) / n
        pa, pb = np.sum(w * da, axis=1) / n, np.sum(w * db, axis=1) / n
        pe = pa * pb + (1 - pa) * (1 - pb)
        kappa = np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1.0), np.nan)
    return np.where(n > 0, po, np.nan), np.where(n > 0, kappa, np.nan)


def decision_agreement_rows(scores: pd.DataFrame, evaluators: Sequence[str] | None = None, *,
                            metric: str = "da", threshold: float = 0.5,
                            seed: int = 0) -> pd.DataFrame:
    """Agreement of D.A. judges on the same answers, every pair, with intervals.

    Decision = score >= ``threshold`` (P("1") >= 0.5; a 0/1 rule gives its own
    label). Per judge: ``share_judged_1``. Per pair: ``agreement`` (share of
    answers with the same decision), ``cohen_kappa`` and ``answer_spearman`` of
    the scores, over the answers both judged, each with a cluster bootstrap over
    questions (a resample draws questions with all their answers). Columns
    ``a, b, quantity, ours, ci_low, ci_high, n_questions, n_undefined, n_answers``
    (``b`` is "-" in the per-judge rows).
    """
    sub = scores[scores["metric"] == metric]
    evs = list(evaluators) if evaluators is not None else list(dict.fromkeys(sub["evaluator"]))
    names = list(dict.fromkeys(sub["system"]))
    qids = sorted(set(sub["id"]))
    mats = {e: score_matrix(sub, (metric, e), systems=names, qids=qids) for e in evs}
    rows = []
    for e in evs:
        m = mats[e]

        def share(rows_, m=m):
            v = m[rows_].ravel()
            v = v[~np.isnan(v)]
            return float(np.mean(v >= threshold)) if v.size else math.nan

        def shares(draws, m=m):  # every resample at once: counts over counts, exactly
            q, col = np.nonzero(~np.isnan(m))
            w = draw_counts(draws, len(qids))[:, q]
            n = w.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(n > 0, np.sum(w * (m[q, col] >= threshold), axis=1) / n, np.nan)

        iv = _cluster(len(qids), share, seed=seed, key=_key("share1", metric, e),
                      vectorized=shares)
        rows.append(_row(iv, a=e, b="-", quantity="share_judged_1",
                         n_answers=int((~np.isnan(m)).sum())))
    for i, a in enumerate(evs):
        for b in evs[i + 1:]:
            ma, mb = mats[a], mats[b]
            both = ~(np.isnan(ma) | np.isnan(mb))

            def pair(rows_, fn, ma=ma, mb=mb):
                x, y = ma[rows_].ravel(), mb[rows_].ravel()
                ok = ~(np.isnan(x) | np.isnan(y))
                return fn(x[ok], y[ok]) if ok.any() else math.nan

            stats = {
                "agreement": lambda x, y: float(np.mean((x >= threshold) == (y >= threshold))),
                "cohen_kappa": lambda x, y: cohen_kappa(x >= threshold, y >= threshold),
                "answer_spearman": lambda x, y: _corr(x, y, "spearman"),
            }
            every = {  # (each quantity draws its own resamples: its key seeds them)
                "agreement": lambda d, ma=ma, mb=mb: _batch_decisions(ma, mb, d, threshold)[0],
                "cohen_kappa": lambda d, ma=ma, mb=mb: _batch_decisions(ma, mb, d, threshold)[1],
                "answer_spearman": lambda d, ma=ma, mb=mb: in_batches(
                    lambda b: _batch_answer_correlation(ma, mb, b, "spearman"), d),
            }
            for quantity, fn in stats.items():
                iv = _cluster(len(qids), lambda r, fn=fn: pair(r, fn), seed=seed,
                              key=_key(quantity, metric, a, b), vectorized=every[quantity])
                rows.append(_row(iv, a=a, b=b, quantity=quantity, n_answers=int(both.sum())))
    cols = ["a", "b", "quantity", "ours", "ci_low", "ci_high", f"n_{UNIT}", "n_undefined",
            "n_answers"]
    return pd.DataFrame(rows).reindex(columns=cols)


# --------------------------------------------------------------------------- Figure 7

def _z(v: np.ndarray) -> np.ndarray:
    sd = np.std(v)
    return (v - v.mean()) / sd if sd > 0 else v * 0.0


def _batch_z(v: np.ndarray) -> np.ndarray:
    """:func:`_z` of every row of ``v`` (the same reductions along the row, so the same
    values to the last bit; rows holding NaN give NaN)."""
    with np.errstate(invalid="ignore"):
        sd = np.std(v, axis=1, keepdims=True)
        return np.where(sd > 0, (v - v.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0),
                        v * 0.0)


def combined_rows(scores: pd.DataFrame, ks: Sequence[float], *, pd_evaluator: str,
                  da_evaluator: str, seed: int = 0) -> pd.DataFrame:
    """Paper Figure 7: per system and k, ``combined`` = k * Z(-P.D.) + Z(D.A.) of the
    system means (z over the systems, population SD; as
    :func:`nfeval_repro.debateqa.systems.znorm_ranking`) with a cluster bootstrap over
    questions (means, z-scores and the combination recomputed on each resample), and the
    ``rank`` it gives (1 = best; exact, no interval: NaN bounds).

    Columns ``system, k, quantity, ours, ci_low, ci_high, n_questions, n_undefined``.
    """
    qids, names, mp, md = _pair(scores, ("pd", pd_evaluator), ("da", da_evaluator), None)
    if len(names) < 2:
        raise NfevalError("combined_rows needs at least two systems scored by both metrics.")

    def combined(rows: np.ndarray, k: float) -> np.ndarray:
        p, d = _means(mp, rows), _means(md, rows)
        if np.isnan(p).any() or np.isnan(d).any():
            return np.full(len(names), np.nan)
        return k * _z(-p) + _z(d)

    def every(draws: np.ndarray, k: float) -> np.ndarray:  # resamples x systems, same values
        def step(rows: np.ndarray) -> np.ndarray:
            p, d = _batch_means(mp, rows), _batch_means(md, rows)
            gap = (np.isnan(p) | np.isnan(d)).any(axis=1, keepdims=True)
            return np.where(gap, np.nan, k * _batch_z(-p) + _batch_z(d))

        return in_batches(step, draws)

    everything = np.arange(len(qids))
    rows = []
    for k in ks:
        full = combined(everything, float(k))
        ranks = pd.Series(full).rank(ascending=False, method="min").to_numpy()
        for j, s in enumerate(names):
            iv = _cluster(len(qids), lambda r, j=j, k=k: float(combined(r, float(k))[j]),
                          seed=seed, key=_key("combined", pd_evaluator, da_evaluator, k, s),
                          vectorized=lambda d, j=j, k=k: every(d, float(k))[:, j])
            rows.append(_row(iv, system=s, k=float(k), quantity="combined"))
            rows.append({"system": s, "k": float(k), "quantity": "rank", "ours": float(ranks[j]),
                         "ci_low": math.nan, "ci_high": math.nan, f"n_{UNIT}": len(qids),
                         "n_undefined": 0})
    cols = ["system", "k", "quantity", "ours", "ci_low", "ci_high", f"n_{UNIT}", "n_undefined"]
    return pd.DataFrame(rows).reindex(columns=cols)
