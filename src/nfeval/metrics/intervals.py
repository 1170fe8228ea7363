"""95% intervals for every number a table reports, and their resampled unit.

A mean over questions (the per-question correlation protocol of LINKAGE
Table 2, DebateQA Table 2) gets a percentile bootstrap interval over
questions (:func:`mean_interval`, ``scipy.stats.bootstrap``); a difference
between two methods scored on the same questions gets a **paired** one
(:func:`paired_difference`: questions are resampled once and both means
recomputed on them, i.e. the mean of the per-question differences). A share
of hits (accuracy, Acc(best)) gets a Wilson interval
(:func:`proportion_interval`, ``scipy.stats.binomtest``). The standard
deviation of a few repeated runs (three reference draws) gets the
chi-square interval of a normal sample's standard deviation
(:func:`std_interval`). A statistic of a
whole sample (AUROC, F1, MCC, Cohen's kappa, Kendall's tau between two
rankings of systems) gets a bootstrap over its clusters
(:func:`cluster_interval`): questions are resampled with all their answers,
since the answers to one question are not independent.

Every interval is seeded from the caller's seed and a key naming the
number, so rerunning gives the same bounds, and one row's interval does not
depend on which other rows a table has. ``n`` is the number of units that
were resampled (questions that carry a defined value, answers, ...), named
by ``unit``.

Degenerate cases are kept explicit rather than hidden: no unit gives NaN
everywhere; one unit, or a statistic that is undefined on some resamples,
gives the estimate with whatever interval the defined resamples support
(``n_undefined`` counts the others).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nfeval.hashing import derived_seed

CONFIDENCE = 0.95
N_RESAMPLES = 10_000
#: Below this many resampled units a printed interval carries :func:`small_n_warning`.
SMALL_N = 10
METHOD = "percentile"

__all__ = [
    "CONFIDENCE",
    "Interval",
    "N_RESAMPLES",
    "cluster_interval",
    "draw_counts",
    "interval_rng",
    "mean_interval",
    "paired_difference",
    "proportion_interval",
    "small_n_warning",
    "std_interval",
]


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% interval, over ``n`` resampled ``unit``."""

    estimate: float
    low: float
    high: float
    n: int
    unit: str = "questions"
    method: str = "bootstrap-percentile"
    n_undefined: int = 0  # resamples on which the statistic was undefined (cluster bootstrap)

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def excludes(self, value: float = 0.0) -> bool:
        """Whether the interval lies wholly above or below ``value``."""
        return bool(self.low > value or self.high < value)

    def columns(self, prefix: str = "") -> dict[str, float | int]:
        """``ours``/``ci_low``/``ci_high``/``n_<unit>`` as table columns."""
        return {f"{prefix}ours": self.estimate, f"{prefix}ci_low": self.low,
                f"{prefix}ci_high": self.high, f"{prefix}n_{self.unit}": self.n}


def small_n_warning(n: int, unit: str = "questions") -> str:
    """" (warning: only n units; an interval on so few cannot be trusted)" below
    :data:`SMALL_N` units, else "": what a command prints after such an interval."""
    if 0 < n < SMALL_N:
        return (f" (warning: only {n} {unit}; a bootstrap interval on fewer than {SMALL_N} "
                f"cannot be trusted)")
    return ""


def interval_rng(seed: int, key: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and the number's name (independent of other rows)."""
    return np.random.default_rng(derived_seed(f"interval/{seed}/{key}", 16))


def _finite(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray([float(v) for v in values], dtype=float)
    return arr[~np.isnan(arr)]


def mean_interval(values: Sequence[float], *, seed: int = 0, key: str = "",
                  unit: str = "questions", n_resamples: int = N_RESAMPLES,
                  confidence: float = CONFIDENCE) -> Interval:
    """The mean of ``values`` (NaN left out) with a percentile bootstrap interval.

    One value gives the value and a NaN interval; identical values give a
    zero-width interval (the bootstrap distribution is a point).
    """
    arr = _finite(values)
    n = int(arr.size)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, unit)
    est = float(arr.mean())
    if n == 1:
        return Interval(est, math.nan, math.nan, 1, unit)
    if np.all(arr == arr[0]):
        return Interval(est, est, est, n, unit)
    res = stats.bootstrap((arr,), np.mean, n_resamples=n_resamples,
                          confidence_level=confidence, method=METHOD, vectorized=True,
                          rng=interval_rng(seed, key))
    ci = res.confidence_interval
    return Interval(est, float(ci.low), float(ci.high), n, unit)


def paired_difference(a: Mapping[Hashable, float], b: Mapping[Hashable, float], *,
                      seed: int = 0, key: str = "", unit: str = "questions",
                      n_resamples: int = N_RESAMPLES,
                      confidence: float = CONFIDENCE) -> Interval:
    """Mean of ``a[q] - b[q]`` over the units where both are defined, paired bootstrap.

    Resampling the units and recomputing both means on the same resample is
    the same as bootstrapping the mean of the per-unit differences, which is
    what this does. Units defined in only one of the two are left out (both
    means are then taken on the same units, so the difference is not the
    difference of the two full-sample means when those rest on other units).
    """
    common = [q for q in a if q in b]
    diffs = [float(a[q]) - float(b[q]) for q in common]
    return mean_interval(diffs, seed=seed, key=key, unit=unit, n_resamples=n_resamples,
                         confidence=confidence)


def proportion_interval(hits: int, n: int, *, unit: str = "questions",
                        confidence: float = CONFIDENCE) -> Interval:
    """``hits / n`` with the Wilson score interval (``scipy.stats.binomtest``)."""
    if n <= 0:
        return Interval(math.nan, math.nan, math.nan, 0, unit, "wilson")
    ci = stats.binomtest(int(hits), int(n)).proportion_ci(confidence_level=confidence,
                                                          method="wilson")
    return Interval(hits / n, float(ci.low), float(ci.high), int(n), unit, "wilson")


def std_interval(values: Sequence[float], *, unit: str = "draws",
                 confidence: float = CONFIDENCE) -> Interval:
    """The sample standard deviation (ddof 1) of ``values`` (NaN left out), chi-square interval.

    For ``k`` values from a normal distribution, ``(k - 1) s^2 / sigma^2``
    follows chi-square with ``k - 1`` degrees of freedom, so sigma lies in
    ``s * sqrt((k - 1) / chi2(1 - a/2))`` to ``s * sqrt((k - 1) / chi2(a/2))``.
    With three values this spans about 0.52 s to 6.3 s: what three repeats
    can say about the spread of a fourth. Fewer than two values give NaN.
    """
    arr = _finite(values)
    k = int(arr.size)
    if k < 2:
        return Interval(math.nan, math.nan, math.nan, k, unit, "chi-square")
    s = float(np.std(arr, ddof=1))
    alpha = (1 - confidence) / 2
    df = k - 1
    low = s * math.sqrt(df / stats.chi2.ppf(1 - alpha, df))
    high = s * math.sqrt(df / stats.chi2.ppf(alpha, df))
    return Interval(s, float(low), float(high), k, unit, "chi-square")


def cluster_interval(units: Sequence, statistic: Callable[[Sequence], float], *,
                     seed: int = 0, key: str = "", unit: str = "questions",
                     n_resamples: int = N_RESAMPLES,
                     confidence: float = CONFIDENCE,
                     vectorized: Callable[[np.ndarray], np.ndarray] | None = None) -> Interval:
    """``statistic(units)`` with a percentile bootstrap over the units (clusters).

    ``units`` are whole clusters (for example one question's answers with
    their labels and scores); a resample draws ``len(units)`` of them with
    replacement and ``statistic`` is recomputed on it. Resamples on which the
    statistic is undefined (NaN: one class left for AUROC, a constant
    ranking for Kendall's tau) are left out of the percentiles and counted
    in ``n_undefined``; scipy's bootstrap would turn the whole interval into
    NaN, so the indices are drawn with numpy here.

    ``vectorized(draws)``, where given, computes every resample's statistic at once from the
    drawn unit indices (an ``n_resamples x n`` integer array), giving the same values as
    ``statistic`` (its callers test that they are equal to the last bit).
    """
    units = list(units)
    n = len(units)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, unit)
    est = float(statistic(units))
    if n == 1:
        return Interval(est, math.nan, math.nan, 1, unit)
    rng = interval_rng(seed, key)
    draws = rng.integers(0, n, size=(n_resamples, n))
    if vectorized is not None:
        values = np.asarray(vectorized(draws), dtype=float)
    else:
        values = np.array([float(statistic([units[i] for i in row])) for row in draws])
    ok = values[~np.isnan(values)]
    undefined = int(values.size - ok.size)
    if ok.size == 0:
        return Interval(est, math.nan, math.nan, n, unit, n_undefined=undefined)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(ok, [100 * alpha, 100 * (1 - alpha)])
    return Interval(est, float(low), float(high), n, unit, n_undefined=undefined)


#: Resamples a vectorized statistic computes per step (memory: this x items x a few arrays).
RESAMPLE_BATCH = 500


def in_batches(every: Callable[[np.ndarray], np.ndarray], draws: np.ndarray) -> np.ndarray:
    """``every`` (a vectorized statistic: resamples x questions -> values) on
    :data:`RESAMPLE_BATCH` resamples at a time, the results concatenated."""
    return np.concatenate([every(draws[i:i + RESAMPLE_BATCH])
                           for i in range(0, len(draws), RESAMPLE_BATCH)])


def draw_counts(draws: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` units is drawn in each resample: ``len(draws) x n`` integers
    (a vectorized statistic on whole clusters weights each unit's items by its count)."""
    draws = np.asarray(draws, dtype=np.int64)
    offset = (np.arange(len(draws), dtype=np.int64) * n)[:, None]
    return np.bincount((draws + offset).ravel(), minlength=len(draws) * n).reshape(len(draws), n)


def doubled_tie_ranks(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of ``x``'s items in every resample, ties averaged, doubled so they are integers.

    ``w``: resamples x items, how often each item is drawn (:func:`draw_counts` of its
    cluster). Returns ``(group, ranks)``: each item's index among ``x``'s distinct values in
    ascending order, and per resample and distinct value twice the average rank (1-based) of
    its drawn items (``2 * below + tied + 1``). An item's doubled rank in a resample is
    ``ranks[:, group]``; integer weights give integer ranks, summed exactly in any order."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    tied = np.add.reduceat(w[:, order], np.flatnonzero(first), axis=1)
    group = np.empty(len(x), dtype=np.intp)
    group[order] = np.cumsum(first) - 1
    return group, 2 * (np.cumsum(tied, axis=1) - tied) + tied + 1


def cluster_mean_interval(groups: Mapping[Hashable, Sequence[float]], *, seed: int = 0,
                          key: str = "", unit: str = "questions",
                          n_resamples: int = N_RESAMPLES,
                          confidence: float = CONFIDENCE) -> Interval:
    """The mean over every item of ``groups`` (NaN left out), resampling whole groups.

    Items of one group (a question's candidates) are not independent, so the
    bootstrap draws groups with replacement and recomputes the item mean on
    each draw (the same as :func:`cluster_interval` with that statistic,
    vectorized). ``n`` counts the groups that hold a value.
    """
    sums, counts = [], []
    for values in groups.values():
        arr = _finite(values)
        if arr.size:
            sums.append(float(arr.sum()))
            counts.append(int(arr.size))
    n = len(sums)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, unit)
    s, c = np.asarray(sums), np.asarray(counts, dtype=float)
    est = float(s.sum() / c.sum())
    if n == 1:
        return Interval(est, math.nan, math.nan, 1, unit)
    draws = interval_rng(seed, key).integers(0, n, size=(n_resamples, n))
    values = s[draws].sum(axis=1) / c[draws].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
    return Interval(est, float(low), float(high), n, unit, "cluster-bootstrap-percentile")
