"""LINKAGE Tables 9-10 and Figure 2: three random draws of the reference list.

The paper draws the reference list three times and reports Spearman's rho
of Pointwise with references, Pairwise and LINKAGE few-shot per draw, their
mean and their standard deviation (the sample one, ddof 1, where its printed
draws allow a check). The experiment :mod:`nfeval_repro.linkage.lk_t09_t10_f02`
does the same on a prefix of lk_t02's judged questions with lk_t02's
candidates:

* draw 1 is lk_t02's own items (``seed``, the same
  :func:`nfeval_repro.linkage.same_items.judged_items` call), so its
  judgments are read from lk_t02's item store;
* every further draw (``seed`` 1, 2, ...) keeps the questions and the
  candidates and draws a new list from the non-candidate answers
  (:func:`nfeval_repro.linkage.follow_up.references_among`); its seed also draws
  the pairwise positions, the demonstrations (from that seed's lists of the
  other questions, :func:`draw_splits`) and, in ``sample`` mode, the sampling.

Holding the candidates fixed is what lets a small run measure what the
paper's std measures, the reference list's effect: with all of a
question's answers judged (the paper), the candidates of two draws differ
only by the few answers that swap into and out of the list; redrawing a
subsample of 8 from dozens would swap nearly all of them.

:func:`draw_summary` gives the mean over draws (with an interval over
questions: each question's coefficient averaged over the draws) and the
sample std of the draw means (with a chi-square interval over the draws).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from nfeval.data.loaders import GradedQuestion
from nfeval_repro.linkage.evaluation import JudgeSample
from nfeval.linkage.references import DEFAULT_PATTERN, ReferenceSplit, sample_all
from nfeval_repro.linkage.follow_up import references_among
from nfeval.metrics.correlation import per_question
from nfeval.metrics.intervals import mean_interval, std_interval

__all__ = ["ROWS", "draw_splits", "draw_summary"]

#: The rows of Tables 9-10: row -> (judge method, shots; None = the run's ``shots``).
ROWS: dict[str, tuple[str, int | None]] = {"pointwise-ref": ("pointwise-ref", 0),
                                           "pairwise": ("pairwise", 0),
                                           "linkage-fewshot": ("linkage", None)}


def draw_splits(questions: Sequence[GradedQuestion], items: JudgeSample, dataset: str,
                draw_seed: int, items_seed: int
                ) -> tuple[list[ReferenceSplit], list[ReferenceSplit]]:
    """(judged splits, demonstration pool) of the draw seeded ``draw_seed``.

    ``items`` are lk_t02's items, drawn with ``items_seed``: that draw returns
    them as they are; any other seed draws new lists for the same candidates.
    """
    if draw_seed == items_seed:
        return list(items.judged), list(items.splits)
    pattern = DEFAULT_PATTERN[dataset]
    by_qid = {q.qid: q for q in questions}
    judged = [references_among(by_qid[s.qid], s.candidates, pattern, draw_seed)
              for s in items.judged]
    return judged, sample_all(questions, pattern, draw_seed, allow_short=True).splits


def draw_summary(frame: pd.DataFrame, *, by: Sequence[str] = ("dataset", "method"),
                 draw: str = "draw", coefficient: str = "spearman", seed: int = 0
                 ) -> pd.DataFrame:
    """The mean and sample std over draws of each ``by`` group's mean coefficient.

    ``frame`` is the per-candidate frame (``by``, ``draw``, ``qid``, ``grade``,
    ``score``). ``mean``: the mean over questions of each question's
    coefficient averaged over the draws where it is defined, with a
    bootstrap interval over those questions; it is the mean of the draw
    means whenever every question has a coefficient in every draw (the
    candidates are the same in every draw, so only constant scores break it).
    ``std``: the sample standard deviation (ddof 1) of the draw means, as the
    paper, with the chi-square 95% interval of a normal sample's std over the
    draws (:func:`nfeval.metrics.intervals.std_interval`; three draws give
    about 0.52 to 6.3 times the std).
    Returns ``by, quantity, ours, ci_low, ci_high, n_questions, n_draws``.
    """
    pq = per_question(frame, by=[*by, draw], coefficients=(coefficient,))
    rows = []
    for key, grp in pq.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        ids = dict(zip(by, key))
        draw_means = grp.groupby(draw, sort=True)["value"].mean()
        per_q = grp.groupby("qid", sort=False)["value"].mean().dropna()
        iv = mean_interval(per_q.to_numpy(), seed=seed,
                           key="/".join(map(str, (*key, "mean over draws"))))
        sd = std_interval(draw_means.to_numpy())  # its n: the draws with a defined mean
        rows.append({**ids, "quantity": "mean", **iv.columns(), "n_draws": sd.n})
        rows.append({**ids, "quantity": "std", "ours": sd.estimate, "ci_low": sd.low,
                     "ci_high": sd.high, "n_questions": iv.n, "n_draws": sd.n})
    return pd.DataFrame(rows, columns=[*by, "quantity", "ours", "ci_low", "ci_high",
                                       "n_questions", "n_draws"])
