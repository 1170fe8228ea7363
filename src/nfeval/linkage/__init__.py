"""LINKAGE (EMNLP 2024): reference lists, lexical baselines, LLM judges.

``nfeval.linkage.score(questions, candidates, references, method=...)`` scores
answers held in memory (:func:`nfeval.linkage.api.linkage_score`).
"""

from nfeval.linkage.api import linkage_score as score

from nfeval.linkage.lexical import correlation_table, lexical_ground_truth, lexical_scores
from nfeval.linkage.references import (
    DEFAULT_PATTERN,
    ReferenceDraw,
    ReferenceSplit,
    sample_all,
    sample_references,
    single_reference,
    usable,
)

__all__ = [
    "score",
    "DEFAULT_PATTERN",
    "ReferenceDraw",
    "ReferenceSplit",
    "correlation_table",
    "lexical_ground_truth",
    "lexical_scores",
    "sample_all",
    "sample_references",
    "single_reference",
    "usable",
]
