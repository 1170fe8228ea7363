"""Table helpers of the LINKAGE experiments (Tables 2, 5, 9-10 and Figure 3).

* :func:`judge_sample` draws the reference lists and picks the questions a
  judge sees, each with at most n candidates drawn uniformly at random
  (:func:`~nfeval.linkage.references.sample_candidates`; TREC-DL-NF
  questions have about 100). The paper judges every candidate; a capped run
  says so in its table.
* :func:`judge_correlations` turns judge results into the per-method rows of
  Table 2 (per-question correlation averaged over questions, as
  :mod:`nfeval.metrics.correlation`), with the questions used and skipped
  and the judge outputs that did not parse.
* :func:`with_paper_rows` puts our value beside every paper row of a table
  whose paper rows come in several judges (Table 2 has Mistral and ChatGPT
  rows; we have one embedded judge): each paper row keeps its judge and gets
  ours, our judge named in its own column.
* WebGLM (Table 5): :func:`webglm_split` (the four generated references
  ``ground3..ground0`` as a graded list, best first; the three graded answers
  as candidates), :func:`best_worst_hits` (per question: is the top-scored
  candidate an answer of the highest grade -- Acc(best) -- and, in addition,
  the bottom-scored one an answer of the lowest grade -- Acc(best+worst))
  and :func:`best_worst_accuracy` (their means). The paper does not say how
  ties are broken. ``ties="miss"`` (default) counts a tie for the top (or
  bottom) place as a miss, so a method that gives all three answers the same
  score never scores a hit; ``ties="expected"`` breaks ties at random, in
  expectation (a tie of t answers for the top place holding b of the best
  grade counts b/t), so the same method scores what chance does.
* :func:`rescale_0_10` maps a method's scores to 0..10 from its own scale,
  as the paper's Figure 3 does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage.references import ReferenceSplit, sample_all, with_candidates
from nfeval.metrics.correlation import COEFFICIENTS, correlation_frame

__all__ = [
    "TIE_RULES",
    "JudgeSample",
    "best_worst_accuracy",
    "best_worst_hits",
    "correlation_frame",
    "judge_sample",
    "judge_correlations",
    "method_scale",
    "rescale_0_10",
    "unparsed_policy",
    "webglm_split",
    "with_paper_rows",
]


@dataclass(frozen=True)
class JudgeSample:
    """A reference draw of a dataset and the part of it an LLM judge sees."""

    splits: list[ReferenceSplit]  # every question's split (the demonstrations' pool)
    judged: list[ReferenceSplit]  # the judged questions, candidates capped
    n_questions: int  # questions in the dataset
    n_unjudgeable: int  # no reference, or candidates of a single grade (no coefficient)

    @property
    def n_not_judged(self) -> int:
        return self.n_questions - len(self.judged)


def judge_sample(questions: Sequence[GradedQuestion], pattern: str, seed: int = 0,
                 limit: int = 0, max_candidates: int = 0, *,
                 order: str = "file") -> JudgeSample:
    """Draw references for every question, then pick the questions a judge sees.

    References: :func:`~nfeval.linkage.references.sample_all` with
    ``allow_short=True`` (the release's behaviour). Judged: the first
    ``limit`` questions (0: all) that have references and candidates of at
    least two grades (a question with one candidate grade has no
    correlation, so judging it would be wasted), in file order
    (``order="file"``) or in an order shuffled by ``seed`` (``"random"``: a
    seeded random sample of the judgeable questions, which grows by
    extension when ``limit`` grows). Each keeps at most ``max_candidates``
    candidates drawn uniformly at random per question
    (:func:`~nfeval.linkage.references.sample_candidates` with
    ``min_grades=2``: uniform over the draws that have two grades, so that
    every judged question has a coefficient; 0: all).
    """
    if order not in ("file", "random"):
        raise NfevalError(f"order must be 'file' or 'random', not {order!r}.")
    draw = sample_all(questions, pattern, seed, allow_short=True)
    ok = [s for s in draw.splits if s.references and len({c.grade for c in s.candidates}) > 1]
    if order == "random":
        ok = sorted(ok, key=lambda s: sha256_text(f"questions/{seed}/{s.qid}"))
    chosen = ok[:limit] if limit > 0 else ok
    judged = [with_candidates(s, max_candidates, seed, min_grades=2) for s in chosen]
    return JudgeSample(draw.splits, judged, len(questions), len(draw.splits) - len(ok))


def unparsed_policy(value: str | float, method: str) -> str | float:
    """The ``unparsed`` option of :class:`~nfeval.linkage.judges.JudgeConfig` for a method.

    ``"drop"`` and numbers (also as text, ``"2"``) pass through; ``"release"``
    (the release's rank-2 imputation) exists for LINKAGE only, so the other
    methods get ``"drop"``.
    """
    if isinstance(value, str) and value not in ("drop", "release"):
        try:
            return float(value)
        except ValueError:
            raise NfevalError(f"unparsed must be drop, release or a number, not {value!r}.") from None
    if value == "release" and not method.startswith("linkage"):
        return "drop"
    return value


def judge_correlations(results: Sequence, splits: Sequence[ReferenceSplit],
                       coefficients: Sequence[str] = COEFFICIENTS) -> pd.DataFrame:
    """Rows ``coefficient, ours, n_questions, n_skipped_undefined, n_unparsed, ...``.

    Column names as :func:`nfeval_repro.linkage.follow_up.correlation_rows`:
    ``n_questions`` the questions whose coefficient is defined (the mean's
    base), ``n_skipped_undefined`` those whose coefficient is undefined.

    ``results`` are :class:`nfeval.linkage.judges.QuestionScores` of the
    splits' questions. ``n_unparsed`` counts judge outputs that did not parse
    (``sample`` mode; whatever the ``unparsed`` policy then did with them);
    ``n_dropped`` candidates left out of their question for a NaN score.
    """
    from nfeval.linkage.judges import correlation_inputs

    grades, scores = correlation_inputs(results, splits)
    return correlation_frame(grades, scores, n_unparsed=sum(r.n_unparsed for r in results),
                             n_outputs=sum(r.n_outputs for r in results),
                             coefficients=coefficients)


def with_paper_rows(ours: pd.DataFrame, paper: pd.DataFrame, on: Sequence[str],
                    paper_only: Sequence[str] = ("judge",), *,
                    require_all: bool = True) -> pd.DataFrame:
    """Every paper row with our value beside it, plus our rows the paper lacks.

    ``paper`` may have several rows per key of ``on`` (one per paper judge,
    ``paper_only`` columns); each gets the same ``ours``. Our rows without a
    paper figure are kept with an empty ``paper``. A paper row whose key has
    no row of ours is an error (as :func:`nfeval_repro.tables.join_paper`), unless
    ``require_all`` is False: then it is kept with an empty ``ours`` (e.g. a
    run with fewer reference draws than the paper).
    """
    on = list(on)
    missing = paper[on].merge(ours[on].drop_duplicates(), on=on, how="left", indicator=True)
    orphans = missing[missing["_merge"] == "left_only"]
    if len(orphans) and require_all:
        raise NfevalError("paper values without a row of ours: "
                          + orphans[on].to_string(index=False))
    keep = on + [c for c in paper_only if c in paper.columns] + ["paper"]
    out = ours.merge(paper[keep], on=on, how="left" if require_all else "outer")
    for c in paper_only:
        if c in out.columns:
            out[c] = out[c].fillna("")
    return out


# --------------------------------------------------------------------------- WebGLM

def webglm_split(question: GradedQuestion, grades: Sequence[int] = (3, 2, 1, 0)
                 ) -> ReferenceSplit:
    """WebGLM's generated references as a graded list, best first; its answers as candidates.

    ``ground3`` (the best) gets grade 3, ``ground2`` grade 2 and so on
    (``grades`` lists the reference keys used, best first; the ``ground4`` of
    13 questions is not used). Reference ids are ``"ground<k>"``.
    """
    refs = []
    for k in grades:
        if k not in question.references:
            raise NfevalError(f"WebGLM question {question.qid} has no ground{k}.")
        refs.append(GradedAnswer(f"ground{k}", question.references[k], int(k), f"ground{k}"))
    return ReferenceSplit(qid=question.qid, pattern="".join(map(str, grades)), seed=0,
                          references=tuple(refs), candidates=tuple(question.answers))


TIE_RULES = ("miss", "expected")


def _pick_probability(group: np.ndarray, wanted: np.ndarray) -> float:
    """Chance that a uniform pick from ``group`` (indices) lands in ``wanted`` (a mask)."""
    return float(wanted[group].mean())


def best_worst_hits(grades: Mapping[str, Sequence[float]],
                    scores: Mapping[str, Sequence[float]], *,
                    ties: str = "miss") -> pd.DataFrame:
    """Per-question hits of paper Table 5's Acc(best) and Acc(best+worst).

    One row per question (index: the question id, in the order of
    ``grades``), columns ``best`` and ``best_worst`` (hit values in 0..1),
    ``top_tie`` and ``bottom_tie`` (the number of answers tied for the top or
    bottom place, 0 when that place is not tied) and ``nan`` (1 when a score
    is NaN: both hits are then 0 under either rule).

    The best answer is any answer of the question's highest grade, the worst
    any of its lowest (with grades 3,3,2 either grade-3 answer is right).
    ``ties="miss"``: a hit needs a single top-scored answer of the highest
    grade (and a single bottom-scored answer of the lowest). ``ties="expected"``:
    ties are broken uniformly at random and the hit is its probability: a top
    group of t answers holding b of the highest grade gives ``best`` = b/t;
    ``best_worst`` multiplies the top and bottom probabilities, or, when all
    scores are equal (top and bottom group are one), is the share of ordered
    pairs of different answers (first of the highest grade, last of the
    lowest): for grades 3,2,1, 1/6, which is chance.
    """
    if ties not in TIE_RULES:
        raise NfevalError(f"ties must be one of {TIE_RULES}, not {ties!r}.")
    if set(grades) != set(scores):
        raise NfevalError("grades and scores cover different questions.")
    rows = []
    for q in grades:
        g = np.asarray(grades[q], dtype=float)
        s = np.asarray(scores[q], dtype=float)
        if g.shape != s.shape or g.size < 2:
            raise NfevalError(f"question {q!r}: needs at least two graded, scored answers.")
        if np.isnan(s).any():
            rows.append({"qid": q, "best": 0.0, "best_worst": 0.0, "top_tie": 0,
                         "bottom_tie": 0, "nan": 1})
            continue
        top = np.flatnonzero(s == s.max())
        bottom = np.flatnonzero(s == s.min())
        is_best, is_worst = g == g.max(), g == g.min()
        if ties == "miss":
            best = float(len(top) == 1 and is_best[top[0]])
            both = best * float(len(bottom) == 1 and is_worst[bottom[0]])
        else:
            best = _pick_probability(top, is_best)
            if len(top) == g.size:  # all tied: one random order of all answers
                pairs = np.outer(is_best, is_worst)
                np.fill_diagonal(pairs, False)
                both = float(pairs.sum()) / (g.size * (g.size - 1))
            else:
                both = best * _pick_probability(bottom, is_worst)
        rows.append({"qid": q, "best": best, "best_worst": both,
                     "top_tie": len(top) if len(top) > 1 else 0,
                     "bottom_tie": len(bottom) if len(bottom) > 1 else 0, "nan": 0})
    frame = pd.DataFrame(rows, columns=["qid", "best", "best_worst", "top_tie", "bottom_tie",
                                        "nan"])
    return frame.set_index("qid")


def best_worst_accuracy(grades: Mapping[str, Sequence[float]],
                        scores: Mapping[str, Sequence[float]], *,
                        ties: str = "miss") -> dict[str, float]:
    """Acc(best) and Acc(best+worst) over questions (paper Table 5).

    The means of :func:`best_worst_hits` (see there for the ``ties`` rules);
    questions with a NaN score count as misses. Returns ``acc_best``,
    ``acc_best_worst``, ``n``, ``n_top_ties``, ``n_bottom_ties`` (questions
    with a tie for that place), ``n_nan``.
    """
    hits = best_worst_hits(grades, scores, ties=ties)
    n = len(hits)
    return {"acc_best": float(hits["best"].mean()) if n else math.nan,
            "acc_best_worst": float(hits["best_worst"].mean()) if n else math.nan,
            "n": n, "n_top_ties": int((hits["top_tie"] > 0).sum()),
            "n_bottom_ties": int((hits["bottom_tie"] > 0).sum()),
            "n_nan": int(hits["nan"].sum())}


# --------------------------------------------------------------------------- Figure 3

def method_scale(method: str, n_references: int = 0) -> tuple[float, float]:
    """(worst, best) score of a method on its own scale.

    ``linkage``: -(m+1) .. -1 (the score is minus the rank); ``pointwise*``:
    0..10; ``pairwise``: 0..1 (weighted share of wins); ROUGE, BLEU,
    BERTScore: 0..1 (the [CLS] cosine: -1..1); ``refppl``: 0..1, given as the
    geometric-mean token probability ``exp(score)`` of the top-grade references.
    """
    if method.startswith("linkage"):
        if n_references < 1:
            raise NfevalError("linkage needs the number of references for its scale.")
        return (-(n_references + 1.0), -1.0)
    if method.startswith("pointwise"):
        return (0.0, 10.0)
    if method == "bertscore-cls":
        return (-1.0, 1.0)
    if method in ("pairwise", "rouge1", "rouge2", "rougeL", "bleu", "bertscore", "refppl"):
        return (0.0, 1.0)
    raise NfevalError(f"no known scale for method {method!r}.")


def rescale_0_10(value: float, worst: float, best: float) -> float:
    """``value`` mapped linearly from ``worst..best`` to 0..10."""
    if best == worst:
        raise NfevalError("a scale needs two different ends.")
    return 10.0 * (float(value) - worst) / (best - worst)
