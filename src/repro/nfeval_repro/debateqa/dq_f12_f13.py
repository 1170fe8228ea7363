"""dq_f12_f13 -- DebateQA Figures 12-13: documents and POVs per question.

The pipeline of dq_f01 with the same parameters
(:func:`nfeval_repro.debateqa.curation.report.profile_run`; its generations are
read from the item stores that hold them): trusted documents per question (Figure 12)
and POVs per question (Figure 13), beside the partial answers per question of a
DebateQA split (where it is not reachable, the project's sample). Means over questions
carry a 95% bootstrap interval over questions; counts are exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from nfeval_repro.debateqa.curation.config import CurationConfig
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]


@dataclass(frozen=True)
class Config(CurationConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f12_f13_docs_povs_per_question.ipynb`` is written from them
    (:class:`~nfeval_repro.debateqa.curation.config.CurationConfig`'s, then its own)."""

    #: DebateQA split whose partial answers per question are shown beside ours
    reference_split: str = "test"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figures 12-13 (``model`` empty: the profile's judge).

    ``parameters``: ``model`` (the LLM's name). ``extra``: ``result`` (the pipeline's
    :class:`~nfeval_repro.debateqa.curation.pipeline.PipelineResult`, whose
    ``questions`` the figures count) and ``reference`` (the split's name and its partial
    answers per question, :func:`~nfeval_repro.debateqa.curation.report.partial_answer_counts`).
    """
    from nfeval_repro.debateqa.curation.report import (
        distribution_table,
        partial_answer_counts,
        profile_run,
    )
    from nfeval_repro.tables import join_paper, paper_values

    res, signature, info = profile_run(config, progress=progress)
    reference = partial_answer_counts(config.reference_split)
    table = join_paper(distribution_table(res, reference, seed=config.seed),
                       paper_values("dq_f12_f13"), on=["figure", "metric"])
    return Experiment(
        id="dq_f12_f13", table=table, id_columns=["figure", "metric", "n"],
        interval="questions", signatures=[signature], parameters={"model": info.name},
        notes="f12: trusted documents per question before the min_docs filter and documents "
              "used per kept question; f13: POVs per question extracted by the profile's "
              "judge (first `limit` questions) and partial answers per produced item; "
              f"f13 reference: partial answers per question of the {reference[0]}. The "
              "paper's 3.7 is the mean after human annotation. Means carry a bootstrap "
              "interval over questions; counts are exact.",
        extra={"result": res, "reference": reference})
