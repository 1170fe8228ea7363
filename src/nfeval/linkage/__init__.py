"""LINKAGE (EMNLP 2024): reference lists, lexical baselines, LLM judges.

``Linkage(settings, model)`` is the metric, built once and called on data in memory
(``.score(questions, candidates, references)``) or on a file (``.score_file(path)``);
``nfeval.linkage.score(questions, candidates, references, method=...)`` is its function form
(:func:`nfeval.linkage.api.linkage_score`).

The names below load on first use, so that importing a light module of the package
(:mod:`nfeval.linkage.methods`, which the command line's ``--help`` reads) does not
import the scoring code and its dependencies.
"""

from __future__ import annotations

__all__ = ["Linkage", "LinkageSettings", "score", "correlation_table", "lexical_ground_truth", "lexical_scores",
           "DEFAULT_PATTERN", "ReferenceDraw", "ReferenceSplit", "sample_all",
           "sample_references", "single_reference", "usable"]

_REFERENCES = ("DEFAULT_PATTERN", "ReferenceDraw", "ReferenceSplit", "sample_all",
               "sample_references", "single_reference", "usable")


def __getattr__(name: str):
    if name == "Linkage":
        from nfeval.linkage.score_file import Linkage

        return Linkage
    if name == "LinkageSettings":
        from nfeval.linkage.settings import LinkageSettings

        return LinkageSettings
    if name == "score":
        from nfeval.linkage.api import linkage_score

        return linkage_score
    if name in ("correlation_table", "lexical_ground_truth", "lexical_scores"):
        from nfeval.linkage import lexical

        return getattr(lexical, name)
    if name in _REFERENCES:
        from nfeval.linkage import references

        return getattr(references, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
