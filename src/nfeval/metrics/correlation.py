"""Per-question correlation with human grades, averaged over questions.

The protocol of LINKAGE (EMNLP 2024, Section 4 and Table 2) as its release
computes it: for every question, correlate the evaluator's scores of that
question's candidate answers with their human grades (Kendall's tau-b via
``scipy.stats.kendalltau``, Spearman's rho, Pearson's r), then report the
mean over questions.

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
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

from nfeval import NfevalError

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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on near-constant input; we return NaN instead
        if coefficient == "kendall":
            value = stats.kendalltau(g, s).statistic  # tau-b, as the release
        elif coefficient == "spearman":
            value = stats.spearmanr(g, s).statistic
        else:
            value = stats.pearsonr(g, s).statistic
    return float(value)


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
