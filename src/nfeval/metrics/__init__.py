"""Metric kernels: correlation protocol, Elo, and the papers' metrics."""

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
