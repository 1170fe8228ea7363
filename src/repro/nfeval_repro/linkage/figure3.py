"""LINKAGE Figure 3: one question's candidates, every method's scores on a common 0..10 scale.

The paper's case study shows its question only as an image (Figure 10), so
the experiment :mod:`nfeval_repro.linkage.lk_f03` takes one of lk_t02's judged
questions (:func:`case_item`: the same
:func:`nfeval_repro.linkage.same_items.judged_items` call as lk_t02, so
the same reference list and the same uniformly drawn candidates) and scores
it with lk_t02's functions, so that every judgment is read from lk_t02's
item store. :func:`rescaled` maps each method's scores from its own range to
0..10 (:func:`nfeval_repro.linkage.evaluation.method_scale`); the human grade g
(0..3) becomes 10 g / 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedQuestion
from nfeval_repro.linkage.evaluation import JudgeSample, method_scale, rescale_0_10
from nfeval_repro.linkage.same_items import judged_items
from nfeval.linkage.references import ReferenceSplit

__all__ = ["case_item", "rescaled"]


def case_item(questions: Sequence[GradedQuestion], dataset: str, *, seed: int,
              max_candidates: int, question: int = 0) -> tuple[JudgeSample, ReferenceSplit]:
    """lk_t02's items up to the ``question``-th judged question, and that question's split."""
    if question < 0:
        raise NfevalError(f"question must be >= 0, got {question}.")
    sample = judged_items(questions, dataset, seed=seed, limit=question + 1,
                          max_candidates=max_candidates)
    if len(sample.judged) <= question:
        raise NfevalError(f"{dataset} has only {len(sample.judged)} judgeable questions.")
    return sample, sample.judged[question]


def rescaled(frame: pd.DataFrame, split: ReferenceSplit) -> pd.DataFrame:
    """One row per candidate and method (the human grade first): 0..10 value and raw score.

    ``frame`` holds one question's per-candidate scores (``method``,
    ``doc_id``, ``score``, optionally ``unparsed``). ``refppl`` scores (a mean
    token log-probability) are shown as ``exp(score)``, the geometric-mean
    token probability, on 0..1. Candidates are numbered in the split's order.
    """
    number = {c.doc_id: i + 1 for i, c in enumerate(split.candidates)}
    m = len(split.references)
    rows = [{"qid": split.qid, "candidate": i + 1, "doc_id": c.doc_id, "grade": c.grade,
             "method": "human", "ours": rescale_0_10(c.grade, 0, 3), "raw": float(c.grade),
             "n_unparsed": 0} for i, c in enumerate(split.candidates)]
    for method, part in frame.groupby("method", sort=False):
        for r in part.itertuples(index=False):
            raw = math.exp(r.score) if method == "refppl" else float(r.score)
            rows.append({"qid": split.qid, "candidate": number[r.doc_id], "doc_id": r.doc_id,
                         "grade": int(r.grade), "method": method,
                         "ours": rescale_0_10(raw, *method_scale(method, m)), "raw": raw,
                         "n_unparsed": int(getattr(r, "unparsed", 0))})
    return pd.DataFrame(rows).sort_values(["candidate"], kind="stable").reset_index(drop=True)
