"""Generic metric kernels: the correlation protocol, intervals, Elo.

The papers' own metrics live with their paper: :mod:`nfeval.debateqa` (P.D., D.A.)
and :mod:`nfeval.linkage` (judges, references, lexical baselines, refppl).
"""

from nfeval.metrics.correlation import (
    COEFFICIENTS,
    CorrelationSummary,
    correlation,
    question_correlations,
)
from nfeval.metrics.elo import Comparison, elo_ratings, ranking

__all__ = [
    "COEFFICIENTS",
    "Comparison",
    "CorrelationSummary",
    "correlation",
    "elo_ratings",
    "question_correlations",
    "ranking",
]
