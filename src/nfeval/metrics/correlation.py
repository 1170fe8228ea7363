"""Per-question correlation with human grades, averaged over questions.

The protocol of LINKAGE (EMNLP 2024, Section 4 and Table 2) as its release
computes it: for every question, correlate the evaluator's scores of that
question's candidate answers with their human grades (Kendall's tau-b,
Spearman's rho, Pearson's r: the values of ``scipy.stats.kendalltau``,
``spearmanr`` and ``pearsonr``, computed here without their per-call
overhead), then report the mean over questions.

Where a coefficient is undefined for a question (fewer than two scored
candidates, or constant grades, or constant scores) the release drops the
NaN silently. We drop it too, but **count** it: every summary carries
``n_used`` and ``n_skipped`` so the mean is never read without its base.

Scores may contain NaN (for example an LLM judge output that did not parse
under the ``drop`` policy); such candidates are removed from their question
before the coefficient is computed and counted in ``n_dropped_items``.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
from scipy import stats

from nfeval.errors import NfevalError

if TYPE_CHECKING:  # pandas is imported where a frame is built
    import pandas as pd

COEFFICIENTS = ("kendall", "spearman", "pearson")


@dataclass(frozen=True)
class CorrelationSummary:
    """Mean of one coefficient over questions, with the count it rests on."""

    coefficient: str
    mean: float
    n_used: int
    n_skipped: int
    n_dropped_items: int = 0
    per_question: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def std(self) -> float:
        vals = [v for v in self.per_question.values() if not math.isnan(v)]
        return float(np.std(vals)) if vals else math.nan


def _is_constant(x: np.ndarray) -> bool:
    return bool(np.all(x == x[0]))


def correlation(grades: Sequence[float], scores: Sequence[float], coefficient: str) -> float:
    """One coefficient for one question; NaN where it is undefined.

    Undefined: fewer than two items, constant grades, or constant scores.
    Items whose score is NaN must be removed by the caller.
    """
    if coefficient not in COEFFICIENTS:
        raise NfevalError(f"unknown coefficient {coefficient!r}; use one of {COEFFICIENTS}")
    g = np.asarray(grades, dtype=float)
    s = np.asarray(scores, dtype=float)
    if g.shape != s.shape:
        raise NfevalError(f"grades and scores differ in length ({g.size} vs {s.size})")
    if g.size < 2 or _is_constant(g) or _is_constant(s):
        return math.nan
    key = (coefficient, g.tobytes(), s.tobytes())
    value = _SEEN.get(key)
    if value is None:
        if len(_SEEN) >= 100_000:
            _SEEN.clear()
        value = _SEEN[key] = _coefficient(g, s, coefficient)
    return value


#: coefficients already computed in this process (tables recompute the same questions' values:
#: a method's row and its paired differences, draw 0 of every reference draw)
_SEEN: dict[tuple[str, bytes, bytes], float] = {}


def _coefficient(g: np.ndarray, s: np.ndarray, coefficient: str) -> float:
    if coefficient == "kendall":
        return kendall_tau_b(g, s)  # tau-b, as the release
    if coefficient == "spearman":
        return spearman_rho(g, s)
    return pearson_r(g, s)


# The three coefficients as ``scipy.stats`` (1.17) computes their statistic, operation for
# operation, so every value equals scipy's to the last bit (tests/test_correlation.py compares
# them on random inputs with ties; the reproduction's tests on every 25th question of its LINKAGE
# Table 2 scores),
# at a fifth of the time: scipy's per-call argument handling and p-value dominated the
# tables' rebuilds.
# NaN in either input gives NaN (scipy's default ``nan_policy``); a constant input gives NaN.

def _undefined(x: np.ndarray, y: np.ndarray) -> bool:
    return (x.size < 2 or bool(np.isnan(x).any() or np.isnan(y).any())
            or _is_constant(x) or _is_constant(y))


def average_ranks(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(x)``: 1-based ranks, tied values share their mean rank."""
    from nfeval.metrics.intervals import doubled_tie_ranks

    group, doubled = doubled_tie_ranks(x, np.ones((1, x.size), dtype=np.int64))
    return doubled[0, group] / 2.0


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """``scipy.stats.spearmanr(x, y).statistic``: Pearson's r of the average ranks."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if _undefined(x, y):
        return math.nan
    return float(np.corrcoef(np.vstack([average_ranks(x), average_ranks(y)]))[1, 0])


def pearson_r(x: Sequence[float], y: Sequence[float]) -> float:
    """``scipy.stats.pearsonr(x, y).statistic``: centred, scaled by the largest deviation
    before the norm (no overflow), clipped to [-1, 1], exactly +-1 for two items."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if _undefined(x, y):
        return math.nan
    xm = x - np.mean(x, axis=-1, keepdims=True)
    ym = y - np.mean(y, axis=-1, keepdims=True)
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
    normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
    r = np.clip(np.vecdot(xm / normxm, ym / normym, axis=-1), -1.0, 1.0)
    return float(np.round(r) if x.size == 2 else r)


#: above this many items Kendall's tau is left to scipy (the pair matrices grow as n squared)
_KENDALL_PAIRS_MAX = 2000


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """``scipy.stats.kendalltau(x, y).statistic`` (tau-b): concordant minus discordant pairs
    over the geometric mean of the pairs untied in x and untied in y."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if _undefined(x, y):
        return math.nan
    if x.size > _KENDALL_PAIRS_MAX:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(stats.kendalltau(x, y).statistic)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones(dx.shape, dtype=bool), 1)
    dis = int(((dx * dy < 0) & upper).sum())
    joint = int(((dx == 0) & (dy == 0) & upper).sum())
    xtie, ytie = int(((dx == 0) & upper).sum()), int(((dy == 0) & upper).sum())
    tot = (x.size * (x.size - 1)) // 2
    con_minus_dis = tot - xtie - ytie + joint - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return float(np.minimum(1.0, max(-1.0, tau)))


def question_correlations(
    grades: Mapping[str, Sequence[float]],
    scores: Mapping[str, Sequence[float]],
    coefficients: Sequence[str] = COEFFICIENTS,
) -> dict[str, CorrelationSummary]:
    """Correlate per question, then average; skipped questions are counted.

    ``grades[q]`` and ``scores[q]`` hold the same candidates in the same
    order. A question present in one mapping and not the other is an error.
    """
    if set(grades) != set(scores):
        missing = sorted(set(grades) ^ set(scores))[:5]
        raise NfevalError(f"grades and scores cover different questions (e.g. {missing})")
    out: dict[str, CorrelationSummary] = {}
    for coef in coefficients:
        per_q: dict[str, float] = {}
        dropped = 0
        for q in grades:
            g = np.asarray(grades[q], dtype=float)
            s = np.asarray(scores[q], dtype=float)
            if g.shape != s.shape:
                raise NfevalError(
                    f"question {q!r}: {g.size} grades but {s.size} scores"
                )
            keep = ~np.isnan(s)
            dropped += int((~keep).sum())
            per_q[q] = correlation(g[keep], s[keep], coef)
        vals = [v for v in per_q.values() if not math.isnan(v)]
        out[coef] = CorrelationSummary(
            coefficient=coef,
            mean=float(np.mean(vals)) if vals else math.nan,
            n_used=len(vals),
            n_skipped=len(per_q) - len(vals),
            n_dropped_items=dropped,
            per_question=per_q,
        )
    return out


# --------------------------------------------------------------------------- tables with intervals

#: per_question's results inside :func:`per_question_memo` (None: outside, nothing kept).
_MEMO: dict | None = None


@contextmanager
def per_question_memo(memo: dict | None = None):
    """Within it, :func:`per_question` computes each distinct input once (keyed by the
    content of the columns it reads): for work that recomputes the same tables under several
    resampling seeds, whose per-question coefficients do not depend on the seed. ``memo``:
    a dict of the caller's to keep the coefficients in across several such blocks."""
    global _MEMO
    previous, _MEMO = _MEMO, ({} if memo is None else memo)
    try:
        yield
    finally:
        _MEMO = previous


def per_question(frame, *, by: Sequence[str] = ("method",),
                 coefficients: Sequence[str] = COEFFICIENTS):
    """Each question's coefficients, from a long frame of per-candidate scores.

    ``frame`` has the columns ``by``, ``qid``, ``grade`` and ``score`` (one
    row per scored candidate; NaN scores are left out of their question and
    counted). Returns ``by, qid, coefficient, value, n_items, n_dropped``
    with ``value`` NaN where the coefficient is undefined.
    """
    import pandas as pd

    if _MEMO is not None:
        cols = [*by, "qid", "grade", "score"]
        key = (tuple(cols), tuple(coefficients), len(frame),
               int(pd.util.hash_pandas_object(frame[cols], index=False).sum()))
        if key not in _MEMO:
            _MEMO[key] = _per_question(frame, by, coefficients)
        return _MEMO[key].copy()
    return _per_question(frame, by, coefficients)


def _per_question(frame, by: Sequence[str], coefficients: Sequence[str]):
    import pandas as pd

    rows = []
    for key, grp in frame.groupby(list(by) + ["qid"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        g = grp["grade"].to_numpy(dtype=float)
        s = grp["score"].to_numpy(dtype=float)
        keep = ~np.isnan(s)
        for coef in coefficients:
            rows.append({**dict(zip([*by, "qid"], key)), "coefficient": coef,
                         "value": correlation(g[keep], s[keep], coef),
                         "n_items": int(keep.sum()), "n_dropped": int((~keep).sum())})
    return pd.DataFrame(rows, columns=[*by, "qid", "coefficient", "value", "n_items",
                                       "n_dropped"])


def correlation_rows(frame, *, by: Sequence[str] = ("method",), seed: int = 0,
                     coefficients: Sequence[str] = COEFFICIENTS):
    """The correlation protocol's rows, each with its 95% interval over questions.

    Per ``by`` group and coefficient: ``ours`` (the mean over questions with
    a defined coefficient), ``ci_low``/``ci_high`` (percentile bootstrap over
    those questions, :func:`nfeval.metrics.intervals.mean_interval`),
    ``n_questions`` (its base), ``n_skipped_undefined``, ``n_candidates``
    (scored candidates) and ``sd`` (of the per-question values). One column
    schema for every correlation table of the project.
    """
    import pandas as pd

    from nfeval.metrics.intervals import mean_interval

    pq = per_question(frame, by=by, coefficients=coefficients)
    rows = []
    for key, grp in pq.groupby(list(by) + ["coefficient"], sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        vals = grp["value"].to_numpy(dtype=float)
        ok = vals[~np.isnan(vals)]
        iv = mean_interval(ok, seed=seed, key="/".join(map(str, key)))
        rows.append({**dict(zip([*by, "coefficient"], key)), **iv.columns(),
                     "n_skipped_undefined": int(np.isnan(vals).sum()),
                     "n_candidates": int(grp["n_items"].sum()),
                     "sd": float(ok.std(ddof=1)) if ok.size > 1 else math.nan})
    cols = [*by, "coefficient", "ours", "ci_low", "ci_high", "n_questions",
            "n_skipped_undefined", "n_candidates", "sd"]
    return pd.DataFrame(rows, columns=cols)


def paired_rows(frame, pairs: Sequence[tuple[str, str]], *, by: Sequence[str] = (),
                method: str = "method", seed: int = 0,
                coefficients: Sequence[str] = COEFFICIENTS):
    """Method A minus method B on the same questions, with a paired 95% interval.

    For every pair ``(a, b)`` of values of the ``method`` column, per ``by``
    group and coefficient: the mean over the questions where both
    coefficients are defined of (A's coefficient - B's), with a bootstrap
    interval that resamples those questions once for both
    (:func:`nfeval.metrics.intervals.paired_difference`). Returns ``by,
    method`` (named ``"a - b"``), ``coefficient, ours, ci_low, ci_high,
    n_questions, a_mean, b_mean`` (the two means on those questions).
    """
    import pandas as pd

    from nfeval.metrics.intervals import paired_difference

    pq = per_question(frame, by=[*by, method], coefficients=coefficients)
    rows = []
    groups = pq.groupby(list(by), sort=False, dropna=False) if by else [((), pq)]
    for key, grp in groups:
        key = key if isinstance(key, tuple) else (key,)
        for a, b in pairs:
            for coef in coefficients:
                sel = grp[grp["coefficient"] == coef]
                va = sel[sel[method] == a].set_index("qid")["value"].dropna()
                vb = sel[sel[method] == b].set_index("qid")["value"].dropna()
                common = va.index.intersection(vb.index)
                iv = paired_difference(va[common].to_dict(), vb[common].to_dict(), seed=seed,
                                       key="/".join(map(str, (*key, a, b, coef))))
                rows.append({**dict(zip(by, key)), method: f"{a} - {b}", "coefficient": coef,
                             **iv.columns(), "a_mean": float(va[common].mean()) if len(common)
                             else math.nan,
                             "b_mean": float(vb[common].mean()) if len(common) else math.nan})
    return pd.DataFrame(rows, columns=[*by, method, "coefficient", "ours", "ci_low", "ci_high",
                                       "n_questions", "a_mean", "b_mean"])


def correlation_frame(grades: Mapping[str, Sequence[float]], scores: Mapping[str, Sequence[float]],
                      *, n_unparsed: int = 0, n_outputs: int | None = None,
                      coefficients: Sequence[str] = COEFFICIENTS) -> pd.DataFrame:
    """One row per coefficient: the per-question correlation of ``scores`` with ``grades``
    (same keys) averaged over questions, with the questions used and skipped.

    ``n_candidates`` counts the scores given; ``n_outputs`` defaults to it (one
    output per candidate), ``n_unparsed`` to 0 (for scores that parse nothing).
    """
    import pandas as pd

    summary = question_correlations(grades, scores, coefficients)
    n_cands = sum(len(v) for v in scores.values())
    n_outputs = n_cands if n_outputs is None else n_outputs
    return pd.DataFrame([{"coefficient": c, "ours": s.mean, "n_questions": s.n_used,
                          "n_skipped_undefined": s.n_skipped, "n_unparsed": n_unparsed,
                          "n_dropped": s.n_dropped_items, "n_outputs": n_outputs,
                          "n_candidates": n_cands} for c, s in summary.items()])
