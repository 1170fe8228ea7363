"""dq_f02: DebateQA Figure 2's analogue, agreement between pseudo-annotators.

The paper's three annotators agree with Spearman's rho > 0.8; its annotations are not
public, and the graded answers of ANTIQUE and TREC-DL-NF have one grade per answer. Each
question's grade preferences are dealt into disjoint seeded parts, each part gives an Elo
ranking, and pairs of parts are compared
(:func:`nfeval_repro.debateqa.agreement.pseudo_annotator_agreement`). No model runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.data import load_linkage
from nfeval_repro.debateqa.agreement import agreement_rows, pseudo_annotator_agreement
from nfeval_repro.debateqa.alignment import select_questions
from nfeval_repro.tables import Experiment, Signature, join_paper, paper_values

__all__ = ["Config", "run"]

ID = "dq_f02"
NOTES = ("Human data: the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release), NOT "
         "the paper's annotations (not public). Pseudo-annotators are disjoint seeded parts "
         "of one question's grade preferences, the closest analogue of inter-annotator "
         "agreement these data allow, not the paper's quantity. paper: rho > 0.8 among the "
         "paper's three annotators, a lower bound, beside our smallest pair (min_pair). "
         f"Intervals: 95% percentile bootstrap over questions ({N_RESAMPLES:,} resamples, seeded).")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f02_annotator_agreement.ipynb`` is written from them."""

    #: run profile (no model runs here; recorded for the record)
    profile: str = "embedded"
    #: random seed: answer draws, the split into parts, Elo game orders, bootstrap
    seed: int = 0
    #: usable questions per dataset (the first in file order), 0 for all
    limit: int = 0
    #: comma-separated graded datasets (LINKAGE release)
    datasets: str = "antique,trec-dl-nf"
    #: answers ranked per question, drawn uniformly at random; 0 for all
    max_answers: int = 6
    #: pseudo-annotators per question (disjoint parts of its preferences)
    annotators: int = 3
    #: Elo replays in seeded game orders, averaged
    rounds: int = 200
    #: Elo ratings closer than this many points form one tie group
    tie_points: float = 1.0


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 2's analogue (parameters: the notebook's; ``profile`` is recorded only, no
    model runs). ``extra``: ``selections`` (per dataset, the questions kept) and
    ``results`` (per dataset, the :class:`~nfeval_repro.debateqa.agreement.AgreementResult`).
    """
    selections = [select_questions(load_linkage(ds.strip()), ds.strip(), limit=config.limit,
                                   max_answers=config.max_answers, seed=config.seed)
                  for ds in config.datasets.split(",") if ds.strip()]
    results = [pseudo_annotator_agreement(s.questions, n_annotators=config.annotators,
                                          rounds=config.rounds, seed=config.seed,
                                          tie_points=config.tie_points) for s in selections]
    if progress:
        for s in selections:
            print(f"{s.dataset}: {len(s.questions)} questions ({s.n_total} in the release, "
                  f"{len(s.skipped)} passed over), "
                  f"{sum(len(q.candidates) for q in s.questions)} answers")
    table = pd.concat([agreement_rows(r, seed=config.seed) for r in results], ignore_index=True)
    table["answers_per_question"] = table["dataset"].map(
        {s.dataset: sum(len(q.candidates) for q in s.questions) / len(s.questions)
         for s in selections})
    table = join_paper(table, paper_values(ID), on=["pair"])
    signatures = [Signature(metric="pseudo_annotator_spearman",
                            variant=f"{config.annotators}-disjoint-parts", seed=config.seed,
                            n=len(r.per_question["qid"].unique()),
                            extra={"rounds": config.rounds, "tie_points": config.tie_points,
                                   "dataset": r.dataset})
                  for r in results]
    return Experiment(id=ID, table=table, id_columns=["dataset", "pair"], interval="questions",
                      signatures=signatures, notes=NOTES,
                      extra={"selections": selections, "results": results})
