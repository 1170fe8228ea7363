"""Items and per-candidate frames of LINKAGE's follow-up tables (3, 4, 6, 7-8, 9-10, Figure 3).

Every follow-up table varies one thing of Table 2's protocol: the reference
list (generated from one ground truth, Table 3; from nothing, Table 4; its
length and grades, Table 6; another random draw, Tables 9-10) or the number of
demonstrations (Tables 7-8). So that a row differs from Table 2's only by that
thing, the follow-ups judge **Table 2's items**: a prefix of lk_t02's judged
questions, each with lk_t02's candidates (drawn uniformly at random,
:func:`nfeval_repro.linkage.same_items.judged_items`), and only the
references change. The paper's Table 6 asks for this too ("candidate answers
are the same for each setting", Section 5.2), and its Tables 3 and 4 repeat
Table 2's Pointwise row, which they can only do on the same candidates.

* :func:`references_among` -- another reference list for a question whose
  candidates are fixed: drawn as :func:`~nfeval.linkage.references.sample_references`
  draws (uniformly within each grade, seeded by the seed and the question,
  short grades keep what there is, as the release) from the answers that are
  **not** candidates. Conditional on its candidates, lk_t02's own reference
  list is distributed exactly so (its references were drawn uniformly within
  each grade and its candidates uniformly from the rest; the number of
  admissible candidate draws does not depend on which references were
  drawn), so a new list and lk_t02's differ only by chance.
* :func:`single_ground_truth` -- LINKAGE-1GT's one ground truth (Section
  4.2.2: an answer of the question's highest grade), drawn uniformly among
  the highest-grade answers that are not candidates (lk_t02's list always
  holds one, so the grade is the question's highest).
* :func:`results_frame` / :func:`judge_setting` -- one judge setting's scores
  as a long per-candidate frame (``ids..., our_judge, qid, doc_id, grade,
  score, unparsed``), the input of
  :func:`nfeval.metrics.correlation.correlation_rows` and ``paired_rows``.
* :func:`with_paper` -- the paper's figure beside each of our rows, the gap
  and whether our 95% interval holds it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.evaluation import unparsed_policy
from nfeval.linkage.judges import (
    JudgeConfig,
    QuestionScores,
    judge_questions,
    load_fewshot_template,
    release_template,
)
from nfeval.linkage.references import ReferenceSplit, sample_references
from nfeval_repro.linkage.same_items import JudgeCall
from nfeval_repro.tables import Signature

__all__ = ["ITEM_COLUMNS", "judge_setting", "references_among", "results_frame",
           "single_ground_truth", "with_paper"]

#: The columns every per-candidate frame ends with (after its identifier columns).
ITEM_COLUMNS = ["our_judge", "qid", "doc_id", "grade", "score", "unparsed"]


def _others(question: GradedQuestion, candidates: Sequence[GradedAnswer]) -> GradedQuestion:
    taken = {a.doc_id for a in candidates}
    return replace(question, answers=[a for a in question.answers if a.doc_id not in taken])


def references_among(question: GradedQuestion, candidates: Sequence[GradedAnswer],
                     pattern: str, seed: int) -> ReferenceSplit:
    """A reference list of ``pattern`` drawn from the question's non-candidate answers.

    The split's candidates are ``candidates`` (in their given order); its
    references are ``sample_references(<the other answers>, pattern, seed,
    allow_short=True)``: a grade with too few other answers keeps what there
    is (``missing`` says what fell short).
    """
    if not candidates:
        raise NfevalError(f"question {question.qid}: no candidates given.")
    split = sample_references(_others(question, candidates), pattern, seed, allow_short=True)
    return replace(split, candidates=tuple(candidates))


def single_ground_truth(question: GradedQuestion, candidates: Sequence[GradedAnswer],
                        seed: int) -> GradedAnswer:
    """LINKAGE-1GT's ground truth: one of the highest-grade non-candidate answers.

    Drawn uniformly, seeded by ``seed`` and the question (the same draw for
    every run that has this question). Raises when every answer is a candidate.
    """
    pool = _others(question, candidates).answers
    if not pool:
        raise NfevalError(f"question {question.qid}: every answer is a candidate; no ground "
                          "truth is left to draw.")
    top = max(a.grade for a in pool)
    best = [a for a in pool if a.grade == top]
    return random.Random(f"1gt/{seed}/{question.qid}").choice(best)


def results_frame(results: Sequence[QuestionScores], splits: Sequence[ReferenceSplit], *,
                  ids: Mapping[str, Any], our_judge: str = "") -> pd.DataFrame:
    """Judge results as one row per candidate: ``ids..., ITEM_COLUMNS``.

    ``unparsed`` counts the candidate's judge outputs that did not parse
    (``sample`` mode; pairwise has one output per reference).
    """
    by_qid = {s.qid: s for s in splits}
    rows = []
    for r in results:
        s = by_qid[r.qid]
        if len(s.candidates) != len(r.scores):
            raise NfevalError(f"question {r.qid}: {len(r.scores)} scores for "
                              f"{len(s.candidates)} candidates.")
        bad = [0] * len(r.scores)
        for j in r.judgments:
            bad[j.candidate] += not j.parsed
        rows += [{**ids, "our_judge": our_judge, "qid": r.qid, "doc_id": c.doc_id,
                  "grade": c.grade, "score": score, "unparsed": b}
                 for c, score, b in zip(s.candidates, r.scores, bad)]
    return pd.DataFrame(rows, columns=[*ids, *ITEM_COLUMNS])


def judge_setting(model, questions: Sequence[GradedQuestion], splits: Sequence[ReferenceSplit],
                  *, method: str, call: JudgeCall, ids: Mapping[str, Any],
                  demonstration_splits=None, progress: bool = False,
                  positions: str = "random") -> tuple[pd.DataFrame, Signature]:
    """Judge ``splits`` in one setting: (per-candidate frame, signature).

    ``method`` is a judge method of :mod:`nfeval.linkage.judges`, the judge called as
    ``call`` says (its ``shots``: this setting's demonstrations);
    ``demonstration_splits`` the pool of the demonstrations (their
    questions must be among ``questions``). ``ids`` name the setting in the
    frame (e.g. ``dataset``, ``pattern``, ``shots``, ``method``) and go into
    the signature. ``positions``: a pairwise judge's (:class:`~nfeval.linkage.judges.
    JudgeConfig`; ``release``: the candidate always first).
    """
    cfg = JudgeConfig(method=method, mode=call.mode, seed=call.seed, max_tokens=call.max_tokens,
                      unparsed=unparsed_policy(call.unparsed, method), positions=positions)
    results = judge_questions(model, questions, splits, cfg, shots=call.shots,
                              progress=progress and " ".join(f"{k} {v}" for k, v in ids.items()),
                              demonstration_splits=demonstration_splits)
    frame = results_frame(results, splits, ids=ids, our_judge=model.info.name)
    label = ids.get("method", method)
    sig = Signature(
        metric=f"linkage-judge/{label}", variant=f"{method}-{call.mode}",
        model=model.info.as_dict(),
        prompt_sha256=sha256_text(release_template(method)
                                  + (load_fewshot_template().sha256 if call.shots else "")),
        seed=call.seed, n=len(splits),
        extra={**{k: str(v) for k, v in ids.items() if k != "method"}, "shots": call.shots,
               "unparsed": str(cfg.unparsed), "positions": cfg.positions,
               "candidates": sum(len(s.candidates) for s in splits)})
    return frame, sig


def with_paper(ours: pd.DataFrame, paper: pd.DataFrame, on: Sequence[str], *,
               judge: str = "") -> pd.DataFrame:
    """``ours`` with the paper's figure beside each row, ``gap`` and ``paper_in_ci``.

    ``paper`` may hold several rows per key of ``on`` (one per paper judge,
    column ``judge``): our row is then repeated once per paper judge, as
    Table 2 does. Our rows without a paper figure (differences, Pearson, our
    extra rows) keep an empty ``paper`` and ``judge``; join the difference
    rows afterwards (their ``on`` columns hold text such as ``"3 - 0"``). A
    text column of ours is matched against the paper's as text (a pattern
    ``3210`` read as a number). ``paper_in_ci`` is
    ``yes``/``no`` where the paper has a figure and our row an interval.
    ``judge`` names the paper's judge when ``paper`` has no ``judge`` column.
    """
    import numpy as np

    on = list(on)
    keep = on + (["judge"] if "judge" in paper.columns else []) + ["paper"]
    paper = paper[keep].astype({c: str for c in on
                                if not pd.api.types.is_numeric_dtype(ours[c])})
    out = ours.merge(paper, on=on, how="left")
    if "judge" not in out.columns:
        out["judge"] = np.where(out["paper"].notna(), judge, "")
    out["judge"] = out["judge"].fillna("")
    out["gap"] = out["ours"] - out["paper"]
    has = out["paper"].notna() & out["ci_low"].notna()
    inside = (out["paper"] >= out["ci_low"]) & (out["paper"] <= out["ci_high"])
    out["paper_in_ci"] = np.where(has, np.where(inside, "yes", "no"), "")
    return out
