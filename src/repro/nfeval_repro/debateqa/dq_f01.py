"""dq_f01 -- DebateQA Figure 1: the curation pipeline, end to end.

The stages of :mod:`nfeval_repro.debateqa.curation.pipeline` on the project's
sample questions and document collection, the LLM stages (POV extraction,
explanations) on the first ``limit`` questions kept by the document stages, with the
profile's generator backend (:func:`nfeval_repro.debateqa.curation.report.profile_run`).
The table counts the questions, documents and POVs left after each stage (exact
counts) beside the paper's; every generation is read from the item store where it
holds it. The document stages are also run with BM25 over the whole collection, for
comparison (no LLM, no deduplication).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.curation.config import CurationConfig
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

#: The searches the document stages are compared with (the default one first).
COMPARED_SEARCHES = ("linked", "bm25")


def _search_comparison(sources: str, k: int, min_docs: int, max_docs: int,
                       device: str | None) -> tuple[pd.DataFrame, dict[str, float]]:
    """The document stages' funnel per search of :data:`COMPARED_SEARCHES`, and the share
    of the documents used that were written for their question."""
    from dataclasses import replace

    from nfeval_repro.debateqa.curation.pipeline import PipelineSettings, run_pipeline

    settings = PipelineSettings(sources=tuple(sources.split(",")), dedup=False, k=k,
                                min_docs=min_docs, max_docs=max_docs)
    alt = {m: run_pipeline(None, replace(settings, search=m), device=device)
           for m in COMPARED_SEARCHES}
    compare = pd.concat([alt[m].funnel.assign(search=m) for m in alt])
    return compare, {m: float(a.hits[a.hits.used].linked.mean()) for m, a in alt.items()}


@dataclass(frozen=True)
class Config(CurationConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f01_curation_pipeline.ipynb`` is written from them (all of
    :class:`~nfeval_repro.debateqa.curation.config.CurationConfig`)."""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The funnel of Figure 1 (``model`` empty: the profile's judge).

    ``parameters``: ``model`` (the LLM's name). ``frames``: ``questions``, ``hits``,
    ``povs``, ``partial_answers``. ``extra``: ``result`` (the
    :class:`~nfeval_repro.debateqa.curation.pipeline.PipelineResult`: its
    ``funnel``, raw POV outputs and release-format ``items``), ``paper`` (the paper's
    counts), ``search_comparison`` (the document stages' funnel per search, column
    ``search``) and ``linked_share`` (per search, the share of the documents used that
    were written for their question).
    """
    from nfeval_repro.debateqa.curation.report import funnel_table, profile_run
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.tables import join_paper, paper_values

    res, signature, info = profile_run(config, progress=progress)
    paper = paper_values("dq_f01")
    table = join_paper(funnel_table(res.funnel), paper, on=["step", "measure"])
    compare, linked = _search_comparison(config.sources, config.k, config.min_docs,
                                         config.max_docs, get_profile(config.profile).device)
    return Experiment(
        id="dq_f01", table=table, id_columns=["step", "stage", "measure"],
        interval="none: counts of questions, documents and POVs left after each stage",
        signatures=[signature], parameters={"model": info.name},
        notes="Questions, documents and POVs left after each curation stage (Figure 1) on the "
              "project's sample questions and document collection; the LLM stages run on "
              "the first `limit` questions kept by the document stages. Paper counts are for "
              "4,473 sourced questions; no annotation stage here.",
        frames={"questions": res.questions, "hits": res.hits, "povs": res.povs,
                "partial_answers": res.partial_answers},
        extra={"result": res, "paper": paper, "search_comparison": compare,
               "linked_share": linked})
