"""Seeded draws of a question's graded answers, shared by both papers' experiments (LINKAGE's
judged candidates, DebateQA's metric-alignment answers)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from nfeval.data.loaders import GradedAnswer

__all__ = ["sample_candidates"]


def sample_candidates(candidates: Sequence[GradedAnswer], k: int, seed: int, qid: str, *,
                      min_grades: int = 1) -> tuple[GradedAnswer, ...]:
    """At most ``k`` of ``candidates`` drawn uniformly at random (``k`` <= 0: all).

    The draw is seeded by ``seed`` and the question id alone, so a question's
    candidates do not depend on the other questions of a run; the kept
    candidates stay in their given order. ``min_grades`` = 2 redraws (with
    the next seed of a fixed sequence) until the drawn candidates have at
    least two grades, when the question's candidates do: the result is then
    uniform over the subsets on which a correlation with the grades is
    defined. Grades never decide which candidate is drawn.
    """
    cands = tuple(candidates)
    if k <= 0 or len(cands) <= k:
        return cands
    possible = len({a.grade for a in cands}) >= min_grades
    keep: list[int] = []
    for attempt in range(1000):
        keep = random.Random(f"candidates/{seed}/{qid}/{attempt}" if attempt
                             else f"candidates/{seed}/{qid}").sample(range(len(cands)), k)
        if not possible or len({cands[i].grade for i in keep}) >= min_grades:
            break
    return tuple(cands[i] for i in sorted(keep))
