"""LINKAGE on answers held in memory: ``nfeval.linkage.score`` (returns a
:class:`~nfeval.result.Result`), the function form of :class:`nfeval.linkage.Linkage`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nfeval.linkage.memory import linkage_result
from nfeval.linkage.score_file import Linkage
from nfeval.result import Result

__all__ = ["linkage_result", "linkage_score"]

#: :meth:`Linkage.score`'s keywords (the rest of a call's keywords are the settings')
_CALL = ("grades", "ids", "use_cache", "progress")


def linkage_score(questions: Sequence[str], candidates: Sequence[Sequence[Any]],
                  references: Sequence[Sequence[Any]] | None = None, *, model: Any = None,
                  **options: Any) -> Result:
    """Score candidate answers with LINKAGE or a baseline (``nfeval linkage``'s methods):
    ``Linkage(method, model, ...).score(questions, candidates, references, ...)``.

    ``questions[i]`` has the candidates ``candidates[i]`` (texts, ``(text,
    grade)`` pairs or dicts ``{"id", "text", "grade"}``) and the reference
    list ``references[i]``, best first: texts (grades m-1..0 by position) or
    ``(text, grade)`` pairs with LINKAGE's integer grades (3 best).
    ``grades=`` (optional, one list per question) are the candidates' human grades; with
    them the result carries the correlation with the grades; ``ids=`` name the questions.
    ``model``: a registry name, hub id, folder or a loaded model (judge methods default to
    :data:`~nfeval.models.registry.DEFAULT_JUDGE`, refppl to
    :data:`~nfeval.models.registry.DEFAULT_REFPPL_LM`; lexical methods take none).
    The other keywords: ``method`` (default ``"linkage"``) and its settings
    (:class:`~nfeval.linkage.settings.LinkageSettings`: ``mode``, ``shots``, ``seed``,
    ``prompt``, ``positions``, ``unparsed``, ``guard``, ``rouge``, ``embedder``,
    ``max_tokens``), checked before anything else; ``runtime`` or ``loader`` (where models
    given by name run, :class:`~nfeval.models.loader.ModelLoader`), ``backend``
    (``"hf"``...) and ``device``; ``use_cache``, ``progress``.
    """
    call = {k: options.pop(k) for k in _CALL if k in options}
    backend, device = options.pop("backend", None), options.pop("device", None)
    if backend is not None or device is not None:
        from nfeval.models.loader import metric_loader

        options["loader"] = metric_loader(options.pop("runtime", None), backend=backend,
                                          device=device)
    return Linkage(options.pop("method", "linkage"), model, **options).score(
        questions, candidates, references, **call)
