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

from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f12_f13_docs_povs_per_question.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed (dedup tie-breaks; LLM sampling when temperature is above 0)
    seed: int = 0
    #: questions sent through the LLM stages (the first kept by the document stages), 0 for all
    limit: int = 4
    #: LLM for POV extraction and explanations: the model of the committed pipeline run; empty: the
    #: judge of the profile
    model: str = "qwen2.5-coder-0.5b-instruct"
    #: comma-separated question sources (nfeval_repro.debateqa.curation.sources.SOURCES)
    sources: str = "debateqa-sample"
    #: document search: linked (the pages of each question ranked by BM25), bm25 or dense over the
    #: whole collection
    search: str = "linked"
    #: search hits per question before the TLD filter
    k: int = 10
    #: keep hits scoring at least this share of the best hit; negative for the default of the method
    min_relative_score: float = -1.0
    #: cosine threshold of the dedup graph; negative for the default of the dedup module
    dedup_threshold: float = -1.0
    #: questions need at least this many trusted documents (paper: 3)
    min_docs: int = 3
    #: most relevant documents kept per question (paper: 5)
    max_docs: int = 5
    #: questions need at least this many POVs (paper: 3)
    min_povs: int = 3
    #: POV extraction stops after this many list items
    max_povs: int = 6
    #: generation budget of one POV extraction
    pov_tokens: int = 256
    #: generation budget of one explanation
    explanation_tokens: int = 200
    #: decoding temperature, 0 for greedy
    temperature: float = 0.0
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
