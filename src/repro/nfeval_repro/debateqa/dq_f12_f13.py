"""dq_f12_f13 -- DebateQA Figures 12-13: documents and POVs per question.

The pipeline of dq_f01 with the same parameters
(:func:`nfeval_repro.debateqa.curation.report.profile_run`; its generations are
read from the item stores that hold them): trusted documents per question (Figure 12)
and POVs per question (Figure 13), beside the partial answers per question of a
DebateQA split (where it is not reachable, the project's sample). Means over questions
carry a 95% bootstrap interval over questions; counts are exact.
"""

from __future__ import annotations

from nfeval_repro.tables import Experiment

__all__ = ["run"]


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 4,
        model: str = "qwen2.5-coder-0.5b-instruct", sources: str = "debateqa-sample",
        search: str = "linked", k: int = 10, min_relative_score: float = -1.0,
        dedup_threshold: float = -1.0, min_docs: int = 3, max_docs: int = 5, min_povs: int = 3,
        max_povs: int = 6, pov_tokens: int = 256, explanation_tokens: int = 200,
        temperature: float = 0.0, reference_split: str = "test",
        progress: bool = True) -> Experiment:
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

    res, signature, info = profile_run(
        profile=profile, model=model, sources=sources, seed=seed, limit=limit, search=search,
        k=k, min_relative_score=min_relative_score, dedup_threshold=dedup_threshold,
        min_docs=min_docs, max_docs=max_docs, min_povs=min_povs, max_povs=max_povs,
        pov_tokens=pov_tokens, explanation_tokens=explanation_tokens,
        temperature=temperature, progress=progress)
    reference = partial_answer_counts(reference_split)
    table = join_paper(distribution_table(res, reference, seed=seed),
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
