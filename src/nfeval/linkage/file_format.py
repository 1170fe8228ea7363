"""What ``nfeval linkage`` reads, and the methods it scores with.

Input: JSON Lines, one question a line::

    {"id": "q1", "question": "How do I ...?",
     "candidates": [{"id": "c1", "text": "...", "grade": 2}, {"id": "c2", "text": "..."}],
     "references": [{"text": "...", "grade": 3}, {"text": "...", "grade": 1}]}

* ``id``: a string or an integer, unique in the file.
* ``question``: non-empty text.
* ``candidates``: the answers to score, at least one. ``text`` is required;
  ``id`` is optional (``c1``, ``c2``... by position) and unique within the
  question; ``grade`` is optional: a human grade (any number, higher is
  better). Where candidates carry grades, the per-question correlation of the
  scores with them is reported, averaged over questions, with its 95%
  interval.
* ``references``: optional, the graded reference list. Either every
  reference has a ``grade`` (an integer >= 0 on LINKAGE's scale, 3 best),
  and the list is sorted best first (a stable sort, so equal grades keep
  their order), or none has, and the list is taken as given, best first,
  with the grades m-1, ..., 0 (all distinct). ``id`` is optional
  (``r1``, ``r2``...).

Other keys are ignored. A line that breaks a rule (bad JSON, a missing or
duplicate id, an empty text, a grade that is not a number...) is reported
with its line number and left out; the other lines are scored.

The methods, their labels and the reference sources are named here too
(:mod:`nfeval.linkage.score_file` says what each does).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage.methods import (JUDGE_METHODS, METHODS, REFERENCE_SOURCES,  # noqa: F401
                                    method_kind)
from nfeval.models.registry import DEFAULT_JUDGE, DEFAULT_REFPPL_LM

#: The default model of each kind of method: the judge, and refppl's base LM.
DEFAULT_MODELS = {"judge": DEFAULT_JUDGE, "refppl": DEFAULT_REFPPL_LM}
#: Columns of the per-candidate table, in order.
COLUMNS = ["qid", "candidate_id", "method", "score", "rank", "grade", "unparsed", "n_outputs",
           "cut_tokens", "references", "dist", "raw", "detail", "flags"]

_LABELS = {
    "linkage": "LINKAGE", "pointwise": "pointwise without references",
    "pointwise-ref": "pointwise with references",
    "pointwise-ref-graded": "pointwise with graded references", "pairwise": "pairwise",
    "refppl": "reference-recovery perplexity", "rouge1": "ROUGE-1 F1", "rouge2": "ROUGE-2 F1",
    "rougeL": "ROUGE-L F1", "bleu": "BLEU", "bleu-smoothed": "BLEU (smoothed, method1)", "bertscore": "BERTScore F1",
    "bertscore-cls": "BERTScore (release: [CLS] cosine)",
}


def method_label(method: str, mode: str | None = None, shots: int = 0) -> str:
    """A method's name for people, e.g. ``"LINKAGE (prob, 3-shot)"``."""
    label = _LABELS[method]
    if method_kind(method) != "judge":
        return label
    return f"{label} ({mode}{f', {shots}-shot' if method == 'linkage' else ''})"


def needs_references(method: str) -> bool:
    """Every method but ``pointwise`` (without references) reads a reference list."""
    method_kind(method)
    return method != "pointwise"


@dataclass(frozen=True)
class FileQuestion:
    """One valid line: a question, its candidates and its reference list (best first).

    A candidate's ``grade`` is its human grade or None; ``raw_label`` keeps
    the value as written.
    """

    qid: str
    line: int
    question: str
    candidates: tuple[GradedAnswer, ...]
    references: tuple[GradedAnswer, ...] = ()
    graded_references: bool = False  # grades given in the file (else m-1..0 from the order)

    def graded_question(self) -> GradedQuestion:
        return GradedQuestion(self.qid, self.question, list(self.candidates))


@dataclass
class LinkageFile:
    """The valid questions of a file, and the lines that were left out."""

    name: str
    sha256: str
    questions: list[FileQuestion]
    skipped: list[str] = field(default_factory=list)  # "line N: reason"

    @property
    def has_grades(self) -> bool:
        """Some candidate carries a human grade."""
        return any(c.grade is not None for q in self.questions for c in q.candidates)


class _Bad(Exception):
    pass


def _text_field(obj: dict, key: str, what: str) -> str:
    if key not in obj:
        raise _Bad(f"{what} has no {key!r}")
    v = obj[key]
    if not isinstance(v, str):
        raise _Bad(f"{what}: {key!r} must be a string, got {type(v).__name__}")
    if not v.strip():
        raise _Bad(f"{what}: {key!r} is empty")
    return v


def _item_id(obj: dict, default: str, what: str) -> str:
    if "id" not in obj:
        return default
    v = obj["id"]
    if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not v.strip()):
        raise _Bad(f"{what}: id must be a non-empty string or an integer, got {v!r}")
    return str(v)


def _human_grade(v: Any, what: str) -> float | int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _Bad(f"{what}: grade must be a number, got {v!r}")
    return v


def _entries(raw: list, qid: str, kind: str, prefix: str) -> list[tuple[str, str, str, dict]]:
    """Check a candidates or references list entry by entry: ``(what, id, text, entry)``.

    Every entry must be an object with a text; ids default to ``prefix`` + its
    1-based position and must be unique within the question.
    """
    out, seen = [], set()
    for k, entry in enumerate(raw, 1):
        what = f"question {qid}, {kind} {k}"
        if not isinstance(entry, dict):
            raise _Bad(f"{what} must be an object with a text")
        eid = _item_id(entry, f"{prefix}{k}", what)
        if eid in seen:
            raise _Bad(f"question {qid}: {kind} id {eid!r} is used twice")
        seen.add(eid)
        out.append((what, eid, _text_field(entry, "text", what), entry))
    return out


def _parse_question(obj: Any) -> tuple[str, str, tuple[GradedAnswer, ...],
                                        tuple[GradedAnswer, ...], bool]:
    if not isinstance(obj, dict):
        raise _Bad("expected a JSON object with id, question and candidates")
    if "id" not in obj:
        raise _Bad("no id")
    qid = _item_id(obj, "", "question")
    question = _text_field(obj, "question", f"question {qid}")
    cands_raw = obj.get("candidates")
    if not isinstance(cands_raw, list) or not cands_raw:
        raise _Bad(f"question {qid}: 'candidates' must be a non-empty list")
    cands = []
    for what, cid, text, c in _entries(cands_raw, qid, "candidate", "c"):
        grade = _human_grade(c["grade"], what) if c.get("grade") is not None else None
        cands.append(GradedAnswer(cid, text, grade, c.get("grade")))
    refs_raw = obj.get("references")
    if refs_raw is None:
        refs_raw = []
    if not isinstance(refs_raw, list):
        raise _Bad(f"question {qid}: 'references' must be a list")
    refs, graded = [], []
    for what, rid, text, r in _entries(refs_raw, qid, "reference", "r"):
        g = r.get("grade")
        if g is not None and (isinstance(g, bool) or not isinstance(g, int) or g < 0):
            raise _Bad(f"{what}: grade must be an integer >= 0 (3 best), got {g!r}")
        graded.append(g is not None)
        refs.append((rid, text, g))
    if any(graded) and not all(graded):
        raise _Bad(f"question {qid}: give every reference a grade, or none (then the list "
                   "order is the ranking, best first)")
    m = len(refs)
    if m == 1 and not graded[0]:
        raise _Bad(f"question {qid}: its one reference has no grade, and one reference without "
                   "a grade is no ranking: give it a grade (an integer, 3 best), or list two or "
                   "more references best first")
    if all(graded) and refs:
        refs = sorted(refs, key=lambda t: -t[2])
        out = tuple(GradedAnswer(rid, text, g, g) for rid, text, g in refs)
    else:
        out = tuple(GradedAnswer(rid, text, m - 1 - i, None) for i, (rid, text, _) in enumerate(refs))
    return qid, question, tuple(cands), out, bool(refs) and all(graded)


def parse_linkage_text(text: str, name: str = "<input>", *, limit: int = 0,
                       bad: dict[int, str] | None = None) -> LinkageFile:
    """Validate every line of a file's text (module docstring); keep the good ones.

    ``limit`` > 0 keeps the first ``limit`` valid questions. Blank lines at
    the end are ignored; a blank line elsewhere is reported. ``bad``: lines already known
    to be unusable (``{line number: why}``, e.g. not UTF-8), reported as skipped.
    """
    if limit < 0:
        raise NfevalError(f"--limit must be >= 0, got {limit}")
    bad = bad or {}
    lines = text.split("\n")
    while lines and not lines[-1].strip() and len(lines) not in bad:
        lines.pop()
    questions: list[FileQuestion] = []
    skipped: list[str] = []
    first: dict[str, int] = {}
    for i, line in enumerate(lines, 1):
        if limit and len(questions) >= limit:
            break
        if i in bad:
            skipped.append(f"line {i}: {bad[i]}")
            continue
        if not line.strip():
            skipped.append(f"line {i}: blank line")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            skipped.append(f"line {i}: invalid JSON: {e.msg} at column {e.colno}")
            continue
        try:
            qid, question, cands, refs, graded = _parse_question(obj)
        except _Bad as e:
            skipped.append(f"line {i}: {e}")
            continue
        if qid in first:
            skipped.append(f"line {i}: duplicate question id {qid!r} (first on line "
                           f"{first[qid]}, kept)")
            continue
        first[qid] = i
        questions.append(FileQuestion(qid, i, question, cands, refs, graded))
    return LinkageFile(name, sha256_text(text), questions, skipped)


def read_linkage_file(path: str | Path, *, limit: int = 0) -> LinkageFile:
    """:func:`parse_linkage_text` of a file, or of standard input for ``"-"``."""
    if str(path) == "-":
        import sys

        return parse_linkage_text(sys.stdin.read(), "<stdin>", limit=limit)
    p = Path(path).expanduser()
    if not p.is_file():
        raise NfevalError(f"answers file {p} does not exist; pass a JSON-lines file with one "
                          'question a line ({"id", "question", "candidates", "references"}; '
                          "see nfeval linkage --help)")
    from nfeval.data.loaders import decode_lines

    try:
        text, bad = decode_lines(p.read_bytes())
    except OSError as e:
        raise NfevalError(f"cannot read {p}: {e.strerror or e}") from None
    return parse_linkage_text(text, str(p), limit=limit, bad=bad)
