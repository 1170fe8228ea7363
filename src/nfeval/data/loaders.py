"""Typed loaders for the release files.

Grades are normalized to the 0..3 scale of the LINKAGE paper (3 = best) for
every dataset:

* ANTIQUE: the release's labels 1..4 become grades 0..3 (``grade = label - 1``);
* TREC-DL-NF: labels are already 0..3 and kept;
* WebGLM: the three candidate answers carry labels 3/2/1, already on the
  paper's scale, and are kept as they are (no 0 occurs). The generated
  references ``ground0..groundN`` are kept in :attr:`GradedQuestion.references`
  keyed by N (``ground3`` is the best of ``ground0..ground3``; 13 of the 100
  questions of the release also carry a ``ground4``, kept as well).

The raw label is kept in :attr:`GradedAnswer.raw_label`.

Question ids (``qid``) are the position of the question in the file (``"0"``,
``"1"``, ...), in the file's order, which JSON object order preserves: stable
for the pinned release files and the same order the authors' scripts iterate
in. (A user file with the same questions in another order gets other ids.)

Every loader takes an optional explicit ``path`` (see
:func:`nfeval.data.fetch.resolve` for the checksum policy) and otherwise
finds the release file in the mirror, the cache, or by download. Malformed
input raises :class:`~nfeval.NfevalError` naming the file and the line (and,
for JSON, the column).

Why this file is long: one loader per release file (LINKAGE's three datasets, DebateQA's
splits and prompts) with the JSON and JSON-lines readers they share, whose line-by-line
checks (encoding, JSON, duplicate keys) every loader's messages rely on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nfeval.errors import NfevalError

from .fetch import resolve
from .formats import (AnswerProblem, DebateItem, PartialAnswer, answer_lines, debate_item,
                      decode_lines, iter_jsonl)

__all__ = [
    "decode_lines",
    "AnswerProblem",
    "AnswerSet",
    "DebateItem",
    "GradedAnswer",
    "GradedQuestion",
    "PartialAnswer",
    "load_answers",
    "load_debateqa",
    "load_linkage",
    "load_prompt",
    "load_webglm",
]

PathLike = str | os.PathLike[str]


# --------------------------------------------------------------------------- types

@dataclass(frozen=True)
class GradedAnswer:
    """One graded candidate answer. ``grade`` is on the 0..3 scale (3 best)."""

    doc_id: str
    text: str
    grade: int
    raw_label: Any
    model: str | None = None  # WebGLM: the LLM that wrote the answer


@dataclass(frozen=True)
class GradedQuestion:
    """A question with its graded answers (and, for WebGLM, generated references)."""

    qid: str
    question: str
    answers: list[GradedAnswer]
    references: dict[int, str] = field(default_factory=dict)

    def by_grade(self) -> dict[int, list[GradedAnswer]]:
        """Answers grouped by grade, best grade first; grades with no answer omitted."""
        out: dict[int, list[GradedAnswer]] = {}
        for a in sorted(self.answers, key=lambda a: -a.grade):
            out.setdefault(a.grade, []).append(a)
        return out

    def grade_counts(self) -> dict[int, int]:
        """Number of answers per grade 3, 2, 1, 0 (zeros included)."""
        counts = {g: 0 for g in (3, 2, 1, 0)}
        for a in self.answers:
            counts[a.grade] = counts.get(a.grade, 0) + 1
        return counts

    @property
    def grades(self) -> list[int]:
        """Grades of :attr:`answers`, in order."""
        return [a.grade for a in self.answers]

    def best_reference(self) -> str | None:
        """The best generated reference among ``ground0..ground3`` (WebGLM), if any."""
        usable = [k for k in self.references if k <= 3]
        return self.references[max(usable)] if usable else None


@dataclass
class AnswerSet:
    """Model answers keyed by question id, and the problems found reading them.

    Lines with a problem are left out of :attr:`answers`; for a duplicate id
    the first occurrence is kept.
    """

    path: Path
    answers: dict[int, str]
    problems: list[AnswerProblem] = field(default_factory=list)
    lines: dict[int, int] = field(default_factory=dict)  # id -> its line (from 1)

    def __len__(self) -> int:
        return len(self.answers)

    def __getitem__(self, qid: int) -> str:
        return self.answers[qid]

    def __contains__(self, qid: object) -> bool:
        return qid in self.answers

    def __iter__(self) -> Iterator[int]:
        return iter(self.answers)

    @property
    def ok(self) -> bool:
        """True when every line was usable."""
        return not self.problems

    def summary(self) -> str:
        """One line: how many answers were read and what was left out."""
        s = f"{self.path}: {len(self.answers)} answers"
        if self.problems:
            shown = "; ".join(str(p) for p in self.problems[:5])
            more = "; ..." if len(self.problems) > 5 else ""
            s += f", {len(self.problems)} line(s) left out ({shown}{more})"
        return s


# --------------------------------------------------------------------------- JSON helpers

def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise NfevalError(f"{path} is not UTF-8 text (byte {e.start}): {e.reason}.") from e
    except OSError as e:
        raise NfevalError(f"cannot read {path}: {e.strerror or e}.") from e


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(path))
    except json.JSONDecodeError as e:
        raise NfevalError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}, "
                          f"column {e.colno}.") from e


def _no_duplicate_keys(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in pairs:
            if k in d:
                raise NfevalError(f"{path}: the key {k[:80]!r} occurs twice in one JSON "
                                  f"object; each question must appear once.")
            d[k] = v
        return d
    return hook


def _fail(path: Path, where: str, what: str) -> NfevalError:
    return NfevalError(f"{path}, {where}: {what}.")


# --------------------------------------------------------------------------- LINKAGE

_LINKAGE = {"antique": "antique", "trec-dl-nf": "trec-dl-nf", "trec": "trec-dl-nf"}


def load_linkage(name: Literal["antique", "trec-dl-nf"],
                 path: PathLike | None = None) -> list[GradedQuestion]:
    """ANTIQUE or TREC-DL-NF questions with their graded answers (grades 0..3).

    Each answer's id is the release's ``doc_id`` (ANTIQUE) or ``docid``
    (TREC-DL-NF, where a few entries use ``doc_id``: both are accepted).
    """
    key = _LINKAGE.get(str(name).lower())
    if key is None:
        raise NfevalError(f"unknown LINKAGE dataset {name!r}; use 'antique' or 'trec-dl-nf' "
                          "(or load_webglm() for WebGLM).")
    p = resolve(key, path)
    data = _load_json(p)
    if not isinstance(data, dict):
        raise _fail(p, "top level", "expected a JSON object {question: [answers]}")
    offset = 1 if key == "antique" else 0
    lo, hi = offset, 3 + offset
    out = []
    for qi, (question, items) in enumerate(data.items()):
        where = f"question {qi} ({question[:60]!r})"
        if not isinstance(items, list):
            raise _fail(p, where, "expected a list of answers")
        answers = []
        for ai, item in enumerate(items):
            w = f"{where}, answer {ai}"
            if not isinstance(item, dict):
                raise _fail(p, w, "expected an object with doc_id, passage and label")
            doc_id = item.get("doc_id", item.get("docid"))
            text = item.get("passage")
            label = item.get("label")
            if doc_id is None or not isinstance(text, str):
                raise _fail(p, w, "missing doc_id/docid or passage")
            if isinstance(label, bool) or not isinstance(label, int) or not lo <= label <= hi:
                raise _fail(p, w, f"label {label!r} is not an integer in {lo}..{hi}")
            answers.append(GradedAnswer(str(doc_id), text, label - offset, label))
        out.append(GradedQuestion(str(qi), question, answers))
    return out


def load_webglm(path: PathLike | None = None) -> list[GradedQuestion]:
    """WebGLM questions: three graded LLM answers (3/2/1, kept) and the references.

    Answer ids are their position in ``doc_list`` (``"0"``, ``"1"``, ``"2"``);
    the writing model is in :attr:`GradedAnswer.model`.
    """
    p = resolve("webglm", path)
    data = _load_json(p)
    if not isinstance(data, dict):
        raise _fail(p, "top level", "expected a JSON object {question: {doc_list, ground0..}}")
    out = []
    for qi, (question, item) in enumerate(data.items()):
        where = f"question {qi} ({question[:60]!r})"
        if not isinstance(item, dict) or not isinstance(item.get("doc_list"), list):
            raise _fail(p, where, "expected an object with a doc_list")
        answers = []
        for ai, doc in enumerate(item["doc_list"]):
            w = f"{where}, answer {ai}"
            if not isinstance(doc, dict) or not isinstance(doc.get("answer"), str):
                raise _fail(p, w, "expected an object with answer, model and label")
            label = doc.get("label")
            if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label <= 3:
                raise _fail(p, w, f"label {label!r} is not an integer in 0..3")
            model = doc.get("model")
            answers.append(GradedAnswer(str(ai), doc["answer"], label, label,
                                        str(model) if model is not None else None))
        refs: dict[int, str] = {}
        for k, v in item.items():
            if k.startswith("ground") and k[6:].isdigit():
                if not isinstance(v, str):
                    raise _fail(p, f"{where}, {k}", "expected a string")
                refs[int(k[6:])] = v
        out.append(GradedQuestion(str(qi), question, answers, dict(sorted(refs.items()))))
    return out


# --------------------------------------------------------------------------- DebateQA

def load_debateqa(split: str | PathLike = "test",
                  path: PathLike | None = None) -> list[DebateItem]:
    """A DebateQA split (``"test"`` or ``"dev"``) or a file in its format.

    ``split`` may itself be a path (anything other than ``"test"``/``"dev"``);
    ``path`` gives an explicit file for the named split. Items keep file order;
    a duplicate id is an error.
    """
    if isinstance(split, str) and split in ("test", "dev"):
        p = resolve(f"debateqa/{split}", path)
    else:
        if path is not None:
            raise NfevalError("give either a split name and a path, or a path as split, "
                              "not two paths.")
        p = Path(split).expanduser()
        if not p.is_file():
            raise NfevalError(f"DebateQA split {str(split)!r} is neither 'test', 'dev' nor an "
                              "existing file.")
    items: list[DebateItem] = []
    seen: dict[int, int] = {}
    for line, obj, err in iter_jsonl(p):
        if err is not None:
            raise NfevalError(f"{p}, line {line}: {err}.")
        try:
            item = debate_item(obj)
        except ValueError as e:
            raise NfevalError(f"{p}, line {line}: {e}.") from None
        if item.id in seen:
            raise NfevalError(f"{p}, line {line}: id {item.id} already used on line "
                              f"{seen[item.id]}.")
        seen[item.id] = line
        items.append(item)
    return items


# --------------------------------------------------------------------------- answers

def load_answers(path: PathLike, *, strict: bool = False) -> AnswerSet:
    """Model answers in the release's input format: ``{"generation": str, "id": int}`` a line.

    Malformed lines, ids that are not integers, duplicate ids (the first is
    kept), empty or whitespace-only generations and blank lines are reported in
    :attr:`AnswerSet.problems` and left out; every other line is returned.
    Extra keys are ignored. ``strict=True`` raises :class:`~nfeval.NfevalError`
    on the first problem instead, with its line number.

    ``path`` may also be ``"debateqa/answers_demo"`` (the authors' demo answers).
    """
    if isinstance(path, str) and path == "debateqa/answers_demo":
        p = resolve("debateqa/answers_demo")
    else:
        p = Path(path).expanduser()
        if not p.is_file():
            raise NfevalError(f"answers file {p} does not exist; pass a JSON-lines file with "
                              '{"generation": ..., "id": ...} per line.')
    answers, first_line, problems = answer_lines(p, strict=strict)
    return AnswerSet(p, answers, problems, first_line)


# --------------------------------------------------------------------------- prompts

_PROMPT_ALIASES = {
    "dispute_awareness_fewshot": "debateqa/dispute_awareness_fewshot",
    "da": "debateqa/dispute_awareness_fewshot",
}


def load_prompt(name: str, path: PathLike | None = None) -> str:
    """A release prompt template, exactly as released (no stripping).

    ``name`` is a registry name (``"linkage/LINKAGE"``,
    ``"linkage/no_ref_point_score"``, ``"linkage/with_ref_point_score"``,
    ``"linkage/pairwise_comparison"``, ``"linkage/create_multi_step_answer"``,
    ``"debateqa/dispute_awareness_fewshot"``), or a LINKAGE prompt's bare name
    (``"LINKAGE"``, ``"pairwise_comparison"``, ...).
    """
    from .registry import REGISTRY

    key = _PROMPT_ALIASES.get(name, name)
    if key not in REGISTRY and f"linkage/{key}" in REGISTRY:
        key = f"linkage/{key}"
    entry = REGISTRY.get(key)
    if entry is None or entry.format != "prompt-text":
        known = ", ".join(n for n, e in REGISTRY.items() if e.format == "prompt-text")
        raise NfevalError(f"unknown prompt {name!r}; known prompts: {known}.")
    return _read_text(resolve(entry, path))
