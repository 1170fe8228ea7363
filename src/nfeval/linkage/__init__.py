"""LINKAGE (EMNLP 2024): reference lists, lexical baselines, LLM judges.

``nfeval.linkage.score(questions, candidates, references, method=...)`` scores
answers held in memory (:func:`nfeval.linkage.api.linkage_score`).

The names below load on first use, so that importing a light module of the package
(:mod:`nfeval.linkage.methods`, which the command line's ``--help`` reads) does not
import the scoring code and its dependencies.
"""

from __future__ import annotations

import importlib

#: Public name -> (module, name in it).
_EXPORTS = {
    "score": ("nfeval.linkage.api", "linkage_score"),
    "correlation_table": ("nfeval.linkage.lexical", "correlation_table"),
    "lexical_ground_truth": ("nfeval.linkage.lexical", "lexical_ground_truth"),
    "lexical_scores": ("nfeval.linkage.lexical", "lexical_scores"),
    **{name: ("nfeval.linkage.references", name) for name in (
        "DEFAULT_PATTERN", "ReferenceDraw", "ReferenceSplit", "sample_all",
        "sample_references", "single_reference", "usable")},
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(module), attr)
    try:  # a submodule, as ``nfeval.linkage.lexical`` after ``import nfeval.linkage``
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
