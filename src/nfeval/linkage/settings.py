"""Question subsamples, candidate sets and correlation rows of the LINKAGE table notebooks.

Shared by lk_t03 / lk_t04 (1GT, 0GT), lk_t06 (reference-list composition)
and lk_t07_t08 (number of demonstrations):

* :func:`first_usable` -- the first ``limit`` questions of a dataset (file
  order) that fill every reference pattern a table compares; the passed-over
  ones are returned so the table can count them.
* :func:`composition_splits` -- LINKAGE Table 6 keeps the candidates fixed
  across patterns ("To ensure the fairness of the experiment, candidate
  answers are the same for each setting", Section 5.2): each pattern's
  references are drawn as :func:`~nfeval.linkage.references.sample_references`
  draws them, and the candidates are the answers that are a reference in
  *none* of the patterns.
* :func:`cap_candidates` -- a seeded subsample of a question's candidates,
  stratified by grade (TREC-DL-NF questions have about 100 answers; the CPU
  profile judges a few of them), kept in the question's order; 0 keeps all.
* :func:`correlation_rows` -- per-question Kendall / Spearman / Pearson
  averaged over questions, with the counts each mean rests on.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.judges import QuestionScores, correlation_inputs
from nfeval.linkage.references import ReferenceSplit, sample_references, usable
from nfeval.metrics.correlation import COEFFICIENTS, question_correlations

__all__ = ["cap_candidates", "composition_splits", "correlation_rows", "first_usable"]


def first_usable(questions: Sequence[GradedQuestion], patterns: Iterable[str], limit: int = 0
                 ) -> tuple[list[GradedQuestion], list[str]]:
    """(the first ``limit`` questions that fill every pattern exactly, qids passed over).

    ``limit`` 0 takes every usable question; passed-over questions are those
    before the last one taken (all unusable ones when ``limit`` is 0).
    """
    pats = list(patterns)
    chosen: list[GradedQuestion] = []
    skipped: list[str] = []
    for q in questions:
        if limit and len(chosen) >= limit:
            break
        if all(usable(q, p) for p in pats):
            chosen.append(q)
        else:
            skipped.append(q.qid)
    return chosen, skipped


def cap_candidates(candidates: Sequence[GradedAnswer], k: int, seed: int, qid: str
                   ) -> tuple[GradedAnswer, ...]:
    """At most ``k`` of ``candidates`` (0: all), stratified by grade, seeded by (seed, qid).

    Grades take turns, best first, each giving its next answer in an order
    shuffled by a generator seeded from (seed, qid), until ``k`` are taken:
    a small cap still shows the judge every grade the question has, so its
    correlation stays defined (a uniform draw of 4 of TREC-DL-NF's answers,
    half of them grade 0, is often one grade only). The kept candidates stay
    in their given order, and a question's draw does not depend on the
    other questions of the run.
    """
    if k <= 0 or len(candidates) <= k:
        return tuple(candidates)
    rng = random.Random(f"{seed}/{qid}/candidates")
    pools: dict[int, list[int]] = {}
    for i, a in enumerate(candidates):
        pools.setdefault(a.grade, []).append(i)
    for g in sorted(pools):
        rng.shuffle(pools[g])
    keep: list[int] = []
    while len(keep) < k:
        for g in sorted(pools, reverse=True):
            if pools[g] and len(keep) < k:
                keep.append(pools[g].pop())
    return tuple(candidates[i] for i in sorted(keep))


def composition_splits(question: GradedQuestion, patterns: Sequence[str], seed: int = 0,
                       max_candidates: int = 0) -> dict[str, ReferenceSplit]:
    """One split per pattern, all with the same candidates (the answers no pattern uses).

    References are exactly those of ``sample_references(question, pattern,
    seed)``; the question must fill every pattern (see :func:`first_usable`).
    """
    splits = {p: sample_references(question, p, seed) for p in patterns}
    used = {id(r) for s in splits.values() for r in s.references}
    common = [a for a in question.answers if id(a) not in used]
    common = cap_candidates(common, max_candidates, seed, question.qid)
    return {p: replace(s, candidates=common) for p, s in splits.items()}


def correlation_rows(results: Sequence[QuestionScores], splits: Sequence[ReferenceSplit], *,
                     n_skipped_inputs: int = 0, **ids: Any) -> list[dict[str, Any]]:
    """One row per coefficient: ``ids``, ``coefficient``, ``ours`` and the counts.

    ``n_questions``: questions whose coefficient is defined (the mean's
    base); ``n_skipped_undefined``: judged questions whose coefficient is
    undefined (constant grades or scores); ``n_skipped_inputs``: questions
    left out before judging (given by the caller); ``n_outputs`` and
    ``n_unparsed``: judge outputs and those that did not parse;
    ``n_candidates``: candidates judged.
    """
    grades, scores = correlation_inputs(results, splits)
    summary = question_correlations(grades, scores)
    n_out = sum(r.n_outputs for r in results)
    n_unparsed = sum(r.n_unparsed for r in results)
    n_cands = sum(len(r.scores) for r in results)
    return [{**ids, "coefficient": c, "ours": summary[c].mean,
             "n_questions": summary[c].n_used, "n_skipped_undefined": summary[c].n_skipped,
             "n_skipped_inputs": int(n_skipped_inputs), "n_candidates": n_cands,
             "n_outputs": n_out, "n_unparsed": n_unparsed}
            for c in COEFFICIENTS]
