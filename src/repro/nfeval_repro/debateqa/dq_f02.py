"""dq_f02: DebateQA Figure 2's analogue, agreement between pseudo-annotators.

The paper's three annotators agree with Spearman's rho > 0.8; its annotations are not
public, and the graded answers of ANTIQUE and TREC-DL-NF have one grade per answer. Each
question's grade preferences are dealt into disjoint seeded parts, each part gives an Elo
ranking, and pairs of parts are compared
(:func:`nfeval_repro.debateqa.agreement.pseudo_annotator_agreement`). No model runs.
"""

from __future__ import annotations

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.data import load_linkage
from nfeval_repro.debateqa.agreement import agreement_rows, pseudo_annotator_agreement
from nfeval_repro.debateqa.alignment import select_questions
from nfeval_repro.tables import Experiment, Signature, join_paper, paper_values

__all__ = ["run"]

ID = "dq_f02"
NOTES = ("Human data: the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release), NOT "
         "the paper's annotations (not public). Pseudo-annotators are disjoint seeded parts "
         "of one question's grade preferences, the closest analogue of inter-annotator "
         "agreement these data allow, not the paper's quantity. paper: rho > 0.8 among the "
         "paper's three annotators, a lower bound, beside our smallest pair (min_pair). "
         f"Intervals: 95% percentile bootstrap over questions ({N_RESAMPLES:,} resamples, seeded).")


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0,
        datasets: str = "antique,trec-dl-nf", max_answers: int = 6, annotators: int = 3,
        rounds: int = 200, tie_points: float = 1.0, progress: bool = True) -> Experiment:
    """Figure 2's analogue (parameters: the notebook's; ``profile`` is recorded only, no
    model runs). ``extra``: ``selections`` (per dataset, the questions kept) and
    ``results`` (per dataset, the :class:`~nfeval_repro.debateqa.agreement.AgreementResult`).
    """
    selections = [select_questions(load_linkage(ds.strip()), ds.strip(), limit=limit,
                                   max_answers=max_answers, seed=seed)
                  for ds in datasets.split(",") if ds.strip()]
    results = [pseudo_annotator_agreement(s.questions, n_annotators=annotators, rounds=rounds,
                                          seed=seed, tie_points=tie_points)
               for s in selections]
    if progress:
        for s in selections:
            print(f"{s.dataset}: {len(s.questions)} questions ({s.n_total} in the release, "
                  f"{len(s.skipped)} passed over), "
                  f"{sum(len(q.candidates) for q in s.questions)} answers")
    table = pd.concat([agreement_rows(r, seed=seed) for r in results], ignore_index=True)
    table["answers_per_question"] = table["dataset"].map(
        {s.dataset: sum(len(q.candidates) for q in s.questions) / len(s.questions)
         for s in selections})
    table = join_paper(table, paper_values(ID), on=["pair"])
    signatures = [Signature(metric="pseudo_annotator_spearman",
                            variant=f"{annotators}-disjoint-parts", seed=seed,
                            n=len(r.per_question["qid"].unique()),
                            extra={"rounds": rounds, "tie_points": tie_points,
                                   "dataset": r.dataset})
                  for r in results]
    return Experiment(id=ID, table=table, id_columns=["dataset", "pair"], interval="questions",
                      signatures=signatures, notes=NOTES,
                      extra={"selections": selections, "results": results})
