"""Reference lists for LINKAGE: graded answers drawn from a question's own answers.

LINKAGE (EMNLP 2024), Section 4.2.2: "we randomly select the same number of
reference answers from the answer set of each level to create the reference
answer list". The grades of the list are a *pattern*, written best first:
``"3210"`` for TREC-DL-NF and ``"33221100"`` for ANTIQUE (Table 6 also tries
``"33321000"`` and ``"32221110"``). The references are shown to the judge best
first, in the pattern's order; every other answer of the question is a
candidate to be ranked.

Many questions have fewer answers of some grade than a pattern asks for (with
``"33221100"``, 333 of ANTIQUE's 500 questions; with ``"3210"``, 17 of
TREC-DL-NF's 55, 15 of them without any grade-3 answer). The paper reports
all 500 and 55 questions, and the release's baseline script falls back from
grade 3 to grade 2 to grade 1 when a grade is absent from the list, so the
release evidently drew *what there was*. Both behaviours are offered:

* ``allow_short=False`` (the pattern exactly): a question that cannot fill it
  raises :class:`~nfeval.NfevalError`; :func:`usable` tells beforehand, and
  :func:`sample_all` skips and lists such questions.
* ``allow_short=True`` (the release's behaviour, as far as its outputs show):
  a grade with too few answers contributes all it has, possibly none; the
  split records what was missing in :attr:`ReferenceSplit.missing`.

Draws are deterministic: each question gets its own ``random.Random`` seeded
with ``f"{seed}/{qid}"``, so the draw of a question does not depend on which
other questions are in the run, and seeds 0, 1, 2 give different draws. (The
release's three draws are files that were never published.)

LINKAGE-1GT (Section 4.2.2): one answer drawn from the question's highest
grade is the only reference, see :func:`single_reference`.

Candidates: the paper ranks every other answer. Where a CPU run must judge
fewer, :func:`sample_candidates` draws them **uniformly at random** per
question (seeded by the seed and the question, never by grade), and every
method of a table is scored on the same drawn candidates, so that two rows
differ only by the method. A draw whose candidates all share one grade has
no coefficient; such questions are skipped and counted like any other.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nfeval.errors import NfevalError
from nfeval.data.draws import sample_candidates
from nfeval.data.loaders import GradedAnswer, GradedQuestion

__all__ = [
    "DEFAULT_PATTERN",
    "ReferenceDraw",
    "ReferenceSplit",
    "parse_pattern",
    "sample_all",
    "sample_candidates",
    "sample_references",
    "single_reference",
    "usable",
    "with_candidates",
]

#: The reference-list grades the paper uses per dataset (Section 4.2.2).
DEFAULT_PATTERN: dict[str, str] = {"antique": "33221100", "trec-dl-nf": "3210"}


@dataclass(frozen=True)
class ReferenceSplit:
    """A question's answers split into references (pattern order) and candidates.

    ``candidates`` keep the question's answer order. ``missing`` lists the
    pattern grades that could not be filled (only with ``allow_short``).
    """

    qid: str
    pattern: str
    seed: int
    references: tuple[GradedAnswer, ...]
    candidates: tuple[GradedAnswer, ...]
    missing: tuple[int, ...] = ()

    @property
    def reference_grades(self) -> tuple[int, ...]:
        return tuple(a.grade for a in self.references)

    @property
    def complete(self) -> bool:
        """True when the references have exactly the pattern's grades."""
        return not self.missing


@dataclass(frozen=True)
class ReferenceDraw:
    """Splits of many questions, and the questions that were skipped."""

    pattern: str
    seed: int
    splits: list[ReferenceSplit]
    skipped: list[str] = field(default_factory=list)  # qids that could not fill the pattern

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)

    @property
    def n_short(self) -> int:
        """Splits whose references fell short of the pattern (``allow_short``)."""
        return sum(not s.complete for s in self.splits)

    def __len__(self) -> int:
        return len(self.splits)


def parse_pattern(pattern: str) -> tuple[int, ...]:
    """``"33221100"`` -> ``(3, 3, 2, 2, 1, 1, 0, 0)``; grades must be digits 0..3."""
    if not pattern or any(c not in "0123" for c in pattern):
        raise NfevalError(f"reference pattern {pattern!r} must be a non-empty string of "
                          "grades 0..3, best first, e.g. '3210' or '33221100'.")
    return tuple(int(c) for c in pattern)


def _shortfall(question: GradedQuestion, grades: Sequence[int]) -> dict[int, int]:
    have = question.grade_counts()
    return {g: k - have.get(g, 0) for g, k in Counter(grades).items() if have.get(g, 0) < k}


def usable(question: GradedQuestion, pattern: str) -> bool:
    """Whether the question has enough answers of every grade to fill ``pattern`` exactly."""
    return not _shortfall(question, parse_pattern(pattern))


def _rng(seed: int, qid: str) -> random.Random:
    return random.Random(f"{seed}/{qid}")  # str seeds hash deterministically (sha512)


def sample_references(question: GradedQuestion, pattern: str = "33221100", seed: int = 0,
                      *, allow_short: bool = False) -> ReferenceSplit:
    """Draw references with the grades of ``pattern`` from the question's answers.

    References come in the pattern's order (best first for the paper's
    patterns); within a grade, in the order drawn. Candidates are all other
    answers, in the question's order. Raises :class:`~nfeval.NfevalError`
    when a grade has too few answers, unless ``allow_short``.
    """
    grades = parse_pattern(pattern)
    short = _shortfall(question, grades)
    if short and not allow_short:
        have = question.grade_counts()
        detail = ", ".join(f"grade {g}: needs {Counter(grades)[g]}, has {have.get(g, 0)}"
                           for g in sorted(short, reverse=True))
        raise NfevalError(f"question {question.qid} cannot fill the reference pattern "
                          f"{pattern!r} ({detail}); skip it (see usable()) or pass "
                          "allow_short=True to take what there is.")
    rng = _rng(seed, question.qid)
    pools = {g: [i for i, a in enumerate(question.answers) if a.grade == g]
             for g in sorted(set(grades), reverse=True)}
    drawn = {g: rng.sample(pool, min(len(pool), Counter(grades)[g])) for g, pool in pools.items()}
    order: list[int] = []
    missing: list[int] = []
    taken = {g: 0 for g in drawn}
    for g in grades:
        if taken[g] < len(drawn[g]):
            order.append(drawn[g][taken[g]])
            taken[g] += 1
        else:
            missing.append(g)
    chosen = set(order)
    return ReferenceSplit(
        qid=question.qid,
        pattern=pattern,
        seed=seed,
        references=tuple(question.answers[i] for i in order),
        candidates=tuple(a for i, a in enumerate(question.answers) if i not in chosen),
        missing=tuple(missing),
    )


def sample_all(questions: Iterable[GradedQuestion], pattern: str = "33221100", seed: int = 0,
               *, allow_short: bool = False) -> ReferenceDraw:
    """:func:`sample_references` for every question; unfillable ones are skipped and listed.

    With ``allow_short`` nothing is skipped; short splits are counted in
    :attr:`ReferenceDraw.n_short` instead.
    """
    splits, skipped = [], []
    for q in questions:
        if not allow_short and not usable(q, pattern):
            skipped.append(q.qid)
            continue
        splits.append(sample_references(q, pattern, seed, allow_short=allow_short))
    return ReferenceDraw(pattern, seed, splits, skipped)


def single_reference(question: GradedQuestion, seed: int = 0) -> ReferenceSplit:
    """LINKAGE-1GT: one answer of the question's highest grade is the only reference.

    The pattern is that grade (``"3"`` for every ANTIQUE question; a
    TREC-DL-NF question without grade-3 answers gets ``"2"``).
    """
    if not question.answers:
        raise NfevalError(f"question {question.qid} has no answers to draw a reference from.")
    top = max(question.grades)
    return sample_references(question, str(top), seed)


def with_candidates(split: ReferenceSplit, k: int, seed: int, *, min_grades: int = 1
                    ) -> ReferenceSplit:
    """``split`` with at most ``k`` of its candidates (:func:`sample_candidates`)."""
    from dataclasses import replace

    return replace(split, candidates=sample_candidates(split.candidates, k, seed, split.qid,
                                                       min_grades=min_grades))
