"""Answers held in memory as a LINKAGE answers file, and a scored file as a
:class:`~nfeval.result.Result` (what :meth:`nfeval.linkage.Linkage.score` runs on)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from nfeval.errors import NfevalError
from nfeval.linkage.file_format import LinkageFile, parse_linkage_text
from nfeval.linkage.file_references import reference_plan
from nfeval.result import Result, json_number

__all__ = ["linkage_result", "memory_file"]


def _entries(value: Any, what: str, grades: Sequence | None = None) -> list[dict]:
    """Candidates or references of one question as the file format's objects."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise NfevalError(f"{what} must be a list of texts (or of dicts with a 'text'), "
                          f"not {type(value).__name__}")
    if grades is not None and len(grades) != len(value):
        raise NfevalError(f"{what}: {len(value)} entries but {len(grades)} grades")
    out = []
    for k, v in enumerate(value):
        if isinstance(v, str):
            obj: dict = {"text": v}
        elif isinstance(v, Mapping):
            obj = dict(v)
        elif isinstance(v, Sequence) and len(v) == 2 and isinstance(v[0], str):
            obj = {"text": v[0], "grade": v[1]}  # (text, grade)
        else:
            raise NfevalError(f"{what}[{k}] must be a text, a (text, grade) pair or a dict "
                              f"with 'text', not {type(v).__name__}")
        if grades is not None and grades[k] is not None:
            obj["grade"] = json_number(grades[k])
        out.append(obj)
    return out


def _same_length(name: str, value: Sequence | None, n: int) -> None:
    if value is not None and len(value) != n:
        raise NfevalError(f"{name} has {len(value)} entries for {n} questions; give one per "
                          "question (in the same order)")


def _positions(messages: Sequence[str], name: str = "questions") -> list[str]:
    """The file reader's ``line N: ...`` as ``questions[N-1]: ...``."""
    return [re.sub(r"^line (\d+)", lambda m: f"{name}[{int(m.group(1)) - 1}]", str(s))
            for s in messages]


def linkage_result(res, source: str) -> Result:
    """A :class:`Result` from :class:`~nfeval.linkage.file_results.LinkageScores`."""
    from nfeval.metrics.intervals import cluster_mean_interval

    table = res.table
    groups = {q: g["score"].tolist() for q, g in table.groupby("qid", sort=False)}
    iv = cluster_mean_interval(groups, seed=res.signature.seed or 0,
                               key=f"api/linkage/{res.method}", unit="questions")
    return Result(metric=res.method, label=res.label, table=table, column="score",
                  item_unit="candidates", score=iv, signature=res.signature,
                  correlations=res.correlations, skipped=list(res.skipped),
                  n_questions=res.n_questions, source=source)


def memory_file(questions: Sequence[str], candidates: Sequence[Sequence[Any]],
                references: Sequence[Sequence[Any]] | None = None, *, grades=None, ids=None,
                method: str = "linkage") -> LinkageFile:
    """The lists of :func:`nfeval.linkage.api.linkage_score` as a read answers file, every
    question checked for ``method`` first: a question it cannot score is an error naming it
    (``questions[i]: ...``), never left out in silence."""
    if isinstance(questions, str) or not isinstance(questions, Sequence):
        raise NfevalError("questions must be a list of question texts")
    n = len(questions)
    if n == 0:
        raise NfevalError("questions is empty: nothing to score")
    _same_length("candidates", candidates, n)
    _same_length("references", references, n)
    _same_length("grades", grades, n)
    _same_length("ids", ids, n)
    lines = []
    for i, q in enumerate(questions):
        obj: dict[str, Any] = {
            "id": str(ids[i]) if ids is not None else f"q{i + 1}", "question": q,
            "candidates": _entries(candidates[i], f"candidates[{i}]",
                                   grades[i] if grades is not None else None)}
        if references is not None and references[i] is not None:
            obj["references"] = _entries(references[i], f"references[{i}]")
        lines.append(json.dumps(obj))
    lf = parse_linkage_text("\n".join(lines) + "\n", name="<memory>")
    _, missing = reference_plan(lf, method, "file", generator=False)
    problems = _positions(list(lf.skipped) + list(missing))
    if problems:
        raise NfevalError(f"{len(problems)} question(s) cannot be scored with {method}: "
                          + "; ".join(problems))
    return lf
