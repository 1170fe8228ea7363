"""What a run of the curation pipeline from a notebook is set by: :class:`CurationConfig`,
the fields dq_f01's and dq_f12_f13's configs share (each experiment's ``Config`` extends it;
:func:`nfeval_repro.debateqa.curation.report.profile_run` reads it). Kept apart from the
pipeline's module so that the experiments import it without the pipeline's dependencies."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CurationConfig"]


@dataclass(frozen=True)
class CurationConfig:
    """The run profile, the LLM and the pipeline's settings
    (:class:`~nfeval_repro.debateqa.curation.pipeline.PipelineSettings`) of a notebook's
    pipeline run; the defaults are the committed run's."""

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
