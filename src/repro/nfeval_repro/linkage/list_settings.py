"""LINKAGE Table 6 (reference-list composition) and Tables 7-8 (demonstrations), on Table 2's items.

The experiments :mod:`nfeval_repro.linkage.lk_t06` and
:mod:`nfeval_repro.linkage.lk_t07_t08` judge a prefix of lk_t02's judged questions
with lk_t02's candidates (:func:`nfeval_repro.linkage.same_items.judged_items`),
the same for every setting, as the paper's Section 5.2 asks ("candidate
answers are the same for each setting"):

* the paper's pattern of the dataset (``33221100`` ANTIQUE, ``3210``
  TREC-DL-NF) keeps lk_t02's reference list, so its 0- and 3-shot rows are
  lk_t02's LINKAGE judgments (read from lk_t02's item store);
* every other pattern draws its list from the question's non-candidate
  answers (:func:`nfeval_repro.linkage.follow_up.references_among`; short grades
  keep what there is, as lk_t02's lists do). Conditional on the candidates
  both lists are drawn alike, so a difference between two patterns is the
  composition's, not the candidates'.

Demonstrations come from the dataset's other questions with the same
pattern (:func:`demonstration_pool`, the pool lk_t02 uses for its own
pattern). Comparisons (:func:`composition_pairs`, :func:`shot_pairs`) are
paired differences on the same questions.
"""

from __future__ import annotations

from collections.abc import Sequence

from nfeval.data.loaders import GradedQuestion
from nfeval.linkage.references import DEFAULT_PATTERN, ReferenceSplit, sample_all
from nfeval_repro.linkage.follow_up import references_among

__all__ = ["PATTERNS", "composition_pairs", "demonstration_pool", "pattern_splits", "shot_pairs"]

#: Table 6's reference lists, best first (|R| = 4 and 8).
PATTERNS = ("3210", "33321000", "33221100", "32221110")


def pattern_splits(questions: Sequence[GradedQuestion], judged: Sequence[ReferenceSplit],
                   dataset: str, patterns: Sequence[str], seed: int
                   ) -> dict[str, list[ReferenceSplit]]:
    """Each pattern's splits of the judged questions, all with the judged candidates.

    The dataset's own pattern (:data:`~nfeval.linkage.references.DEFAULT_PATTERN`)
    keeps ``judged`` as they are (lk_t02's lists); the others are drawn with
    :func:`~nfeval_repro.linkage.follow_up.references_among`.
    """
    by_qid = {q.qid: q for q in questions}
    out = {}
    for p in patterns:
        if p == DEFAULT_PATTERN[dataset]:
            out[p] = list(judged)
        else:
            out[p] = [references_among(by_qid[s.qid], s.candidates, p, seed) for s in judged]
    return out


def demonstration_pool(questions: Sequence[GradedQuestion], pattern: str, seed: int
                       ) -> list[ReferenceSplit]:
    """Every question's ``pattern`` list (short grades keep what there is): the demonstrations'
    pool. For the dataset's own pattern this is lk_t02's pool (``JudgeSample.splits``)."""
    return sample_all(questions, pattern, seed, allow_short=True).splits


def composition_pairs(patterns: Sequence[str], dataset: str) -> list[tuple[str, str]]:
    """Every pattern minus the paper's default pattern of the dataset."""
    base = DEFAULT_PATTERN[dataset]
    return [(p, base) for p in patterns if p != base] if base in patterns else []


def shot_pairs(shots: Sequence[int], base: int = 0) -> list[tuple[int, int]]:
    """Every number of demonstrations minus ``base`` (0-shot)."""
    return [(n, base) for n in shots if n != base] if base in shots else []
