"""The verdict rule every reading uses: an interval against its line (``holds``,
``contradicted``, ``cannot tell at n``), *too few questions*, and what could turn a verdict
(other resampling seeds, a tie on a discrete statistic, the dtype), named for what it measured.
The claims (:mod:`nfeval_repro.claims`) and the experiments that read their own rows the same
way (lk_x03, lk_x07) import it from here: the claims read the experiments, never the reverse.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FLIP_LABEL", "MIN_QUESTIONS", "TIE", "VERDICTS", "by_resampling",
           "flip_probability", "kind", "plain_verdict", "reseed_spread", "row_verdict", "tie",
           "verdict"]

VERDICTS = ("holds", "contradicted", "cannot tell at n", "too few questions", "not computed")
#: Fewer questions than this and a row's interval cannot be trusted (its verdict: too few).
MIN_QUESTIONS = 10


def verdict(ci_low: float, ci_high: float, line: float = 0.0) -> str:
    """``holds`` when the interval is wholly above ``line`` (the claim's side), ``contradicted``
    when wholly below it, else ``cannot tell at n``."""
    if any(not np.isfinite(x) for x in (ci_low, ci_high)):
        return "cannot tell at n"
    if ci_low > line:
        return "holds"
    if ci_high < line:
        return "contradicted"
    return "cannot tell at n"


def reseed_spread(ci_low: float, ci_high: float) -> float:
    """The Monte Carlo standard deviation of a 95% percentile-bootstrap bound (what another
    resampling seed moves it by), from the interval's width: with the bootstrap distribution
    about normal, of standard error se = width / 3.92, a percentile bound of B resamples
    spreads by sqrt(p (1 - p) / B) / phi(z_p) * se (p = 0.025, z_p = 1.96)."""
    from scipy.stats import norm

    from nfeval.metrics.intervals import N_RESAMPLES

    p = 0.025
    se = (ci_high - ci_low) / (2 * norm.ppf(1 - p))
    return float(math.sqrt(p * (1 - p) / N_RESAMPLES) / norm.pdf(norm.ppf(p)) * se)


#: A row reads *borderline* by resampling where another seed turns its verdict with at least
#: this probability (:func:`flip_probability`).
FLIP_LABEL = 0.05
#: A bound within this of its line is the line itself: a tie of a statistic that moves in
#: discrete steps (Kendall's tau over 5 systems in steps of 0.2, an accuracy over 100
#: questions in steps of 0.01), computed exactly up to the floating sum's last digits.
TIE = 1e-9


def flip_probability(ci_low: float, ci_high: float, line: float = 0.0) -> float:
    """The chance that another resampling seed turns the verdict of the interval
    ``(ci_low, ci_high)`` against ``line``: each bound moves between seeds about normally with
    its Monte Carlo spread (:func:`reseed_spread`), so a row that holds turns where its lower
    bound crosses the line, Phi(-(ci_low - line) / spread), one contradicted where its upper
    bound does, and one that cannot tell where either bound leaves the line behind (the sum of
    the two). NaN for an interval with no width or a bound not finite."""
    from scipy.stats import norm

    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return math.nan
    spread = reseed_spread(ci_low, ci_high)
    if spread <= 0:
        return math.nan
    if ci_low > line:
        return float(norm.cdf(-(ci_low - line) / spread))
    if ci_high < line:
        return float(norm.cdf(-(line - ci_high) / spread))
    return float(norm.cdf(-(line - ci_low) / spread) + norm.cdf(-(ci_high - line) / spread))


def tie(ci_low: float, ci_high: float, line: float = 0.0) -> str:
    """``"lower"`` or ``"upper"`` where that bound equals the line (within :data:`TIE`), else
    ``""``."""
    if np.isfinite(ci_low) and abs(ci_low - line) <= TIE:
        return "lower"
    if np.isfinite(ci_high) and abs(ci_high - line) <= TIE:
        return "upper"
    return ""


def row_verdict(ci_low: float, ci_high: float, line: float, n: int,
                dtype_shift: float = math.nan, dtype: str = "", *,
                flips: int | None = None, seeds: int = 0) -> str:
    """A row's label: its verdict (:func:`verdict`), *too few questions* under
    :data:`MIN_QUESTIONS`, and otherwise what could turn it, each named for what it measured:

    * ``borderline: V here; other resampling seeds turn it in k of K`` where ``flips`` of
      ``seeds`` other resampling seeds (the brute force, :func:`brute_force`) give another
      verdict, at least :data:`FLIP_LABEL` of them; with no seeds counted, ``...; another
      resampling seed turns it with probability p (estimated ...)`` where
      :func:`flip_probability` is at least :data:`FLIP_LABEL`;
    * a bound equal to the line (:func:`tie`) is a tie: ``cannot tell at n: a tie, ...``
      (the statistic moves in discrete steps and its bound lands on the line);
    * ``borderline: V here; float32 could give W`` where the comparison was computed in
      ``dtype`` (not float32) and moving the interval back by ``dtype_shift`` (what ``dtype``
      moved the same comparison against float32 where both exist: float32 ~ ours - shift)
      gives another verdict: only a shift whose direction crosses the line turns a row."""
    v = verdict(ci_low, ci_high, line)
    if 0 < n < MIN_QUESTIONS:
        return "too few questions"
    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return v
    near = min(abs(ci_low - line), abs(ci_high - line))
    side = tie(ci_low, ci_high, line)
    if seeds and flips is not None:
        if flips / seeds >= FLIP_LABEL:
            return (f"borderline: {v} here; other resampling seeds turn it in {flips} of "
                    f"{seeds} (a bound {near:.4f} from the line)")
    else:
        p = math.nan if side else flip_probability(ci_low, ci_high, line)
        if np.isfinite(p) and p >= FLIP_LABEL:
            return (f"borderline: {v} here; another resampling seed turns it with probability "
                    f"{p:.2f} (estimated from the interval's width: a bound {near:.4f} from "
                    f"the line, Monte Carlo spread {reseed_spread(ci_low, ci_high):.4f})")
    if side:
        return (f"cannot tell at n: a tie, the {side} bound equals the line {line:g} (the "
                f"statistic moves in steps)")
    if np.isfinite(dtype_shift):
        other = verdict(ci_low - dtype_shift, ci_high - dtype_shift, line)
        if other != v:
            return (f"borderline: {v} here; float32 could give {other} ({dtype} moved this "
                    f"comparison by {dtype_shift:+.4f} against float32 on the 8-candidate draw)")
    return v


def by_resampling(label: str) -> bool:
    """Whether a label reads *borderline* because other resampling seeds turn it."""
    label = str(label)
    return label.startswith("borderline: ") and (
        "resampling seeds turn it" in label or "resampling seed turns it" in label)


def kind(label: str) -> str:
    """The verdict a label names: ``borderline``, ``not computed`` or one of :data:`VERDICTS`
    (a tie's label reads ``cannot tell at n``)."""
    label = str(label)
    if label.startswith("borderline"):
        return "borderline"
    for v in VERDICTS:
        if label.startswith(v):
            return v
    return label


def plain_verdict(label: str) -> str:
    """The verdict a label stands on: a borderline label's ``V here``, else :func:`kind`."""
    label = str(label)
    if label.startswith("borderline: "):
        return label.split(": ", 1)[1].split(" here", 1)[0]
    return kind(label)
