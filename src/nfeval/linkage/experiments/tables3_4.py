"""LINKAGE Tables 3 and 4: reference lists written by an LLM (1GT, 0GT), on Table 2's items.

The notebooks ``lk_t03_single_ground_truth.ipynb`` (LINKAGE-1GT, Table 3)
and ``lk_t04_no_ground_truth.ipynb`` (LINKAGE-0GT, Table 4) judge a prefix
of lk_t02's judged questions with lk_t02's candidates
(:func:`nfeval.linkage.experiments.table2.judged_items`), so that every
row differs from Table 2's on the same items only by the references:

* ``generated`` rows -- the method judged against the LLM-written list
  (:mod:`nfeval.linkage.generated`): golden answer (grade 3) from the one
  ground truth (1GT, :func:`nfeval.linkage.experiments.settings.single_ground_truth`,
  a highest-grade answer that is not a candidate) or from the question
  alone (0GT), then three degraded answers (grades 2, 1, 0);
* ``none`` -- Pointwise without references, lk_t02's own judgments (the
  paper's Tables 3 and 4 repeat Table 2's row, which only the same
  candidates allow);
* ``human (lk_t02)`` -- LINKAGE 0-shot and few-shot with lk_t02's human
  reference list (read from lk_t02's item store): what the generated list
  costs against a human one, on the same questions (beyond the paper's
  tables, which it sets side by side with Table 2).

Every row is a per-question correlation averaged over questions, with its
95% interval (:func:`nfeval.metrics.correlation.correlation_rows`); the
comparisons (:func:`comparisons`) are paired differences on the same questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.generated import GeneratedReferences, generated_split
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.experiments.settings import single_ground_truth

__all__ = [
    "GENERATED_ROWS",
    "HUMAN_ROWS",
    "comparisons",
    "generated_splits",
    "ground_truths",
    "references_frame",
]

#: Rows judged with the generated list, per setting: row -> (judge method, shots; None = the
#: run's ``shots``). Pointwise with references is the release's graded variant (each
#: reference with its score), as its 1GT/0GT script.
GENERATED_ROWS: dict[str, dict[str, tuple[str, int | None]]] = {
    "1gt": {"pointwise-ref": ("pointwise-ref-graded", 0), "pairwise": ("pairwise", 0),
            "linkage-0shot": ("linkage", 0), "linkage-fewshot": ("linkage", None)},
    "0gt": {"linkage-0shot": ("linkage", 0), "linkage-fewshot": ("linkage", None)},
}
#: lk_t02's rows read beside them (Table 2's row names), and their names here.
HUMAN_ROWS: dict[str, str] = {"pointwise-noref": "pointwise-noref",
                              "linkage-0shot": "linkage-0shot-human",
                              "linkage-fewshot": "linkage-fewshot-human"}


def ground_truths(questions: Sequence[GradedQuestion], splits: Sequence[ReferenceSplit],
                  seed: int) -> dict[str, GradedAnswer]:
    """LINKAGE-1GT's one ground truth of every judged question (qid -> answer)."""
    by_qid = {q.qid: q for q in questions}
    return {s.qid: single_ground_truth(by_qid[s.qid], s.candidates, seed) for s in splits}


def generated_splits(questions: Sequence[GradedQuestion], splits: Sequence[ReferenceSplit],
                     lists: Sequence[GeneratedReferences], seed: int) -> list[ReferenceSplit]:
    """The judged splits with their generated list as references (same candidates).

    Questions whose generation gave no golden answer are left out (counted by
    the caller as ``not ok``); short lists are kept, with ``missing`` set.
    """
    by_qid = {q.qid: q for q in questions}
    made = {r.qid: r for r in lists}
    return [generated_split(by_qid[s.qid], made[s.qid], s.candidates, seed)
            for s in splits if s.qid in made and made[s.qid].ok]


def comparisons(setting: str) -> list[tuple[str, str]]:
    """LINKAGE minus the baselines on the same items, and generated minus human references."""
    rows = GENERATED_ROWS[setting]
    baselines = ["pointwise-noref"] + [r for r in rows if not r.startswith("linkage")]
    pairs = [(a, b) for a in ("linkage-0shot", "linkage-fewshot") for b in baselines]
    pairs += [(a, HUMAN_ROWS[a]) for a in ("linkage-0shot", "linkage-fewshot")]
    return pairs


def references_frame(lists: Sequence[GeneratedReferences], *, dataset: str,
                     ground_texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every generated list as rows (one per reference), with how it was obtained."""
    rows = []
    for r in lists:
        for a in r.references() or (None,):
            rows.append({"dataset": dataset, "qid": r.qid, "grade": a.grade if a else None,
                         "source": a.model if a else None, "text": a.text if a else "",
                         "ground_truth_id": r.ground_truth_id or "",
                         "ground_truth": (ground_texts or {}).get(r.qid, ""),
                         "missing": "".join(map(str, r.missing)),
                         "golden_attempts": r.golden_attempts,
                         "degraded_outputs": r.degraded_outputs,
                         "degraded_failures": r.degraded_failures})
    return pd.DataFrame(rows)
