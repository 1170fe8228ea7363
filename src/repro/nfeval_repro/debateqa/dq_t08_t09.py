"""dq_t08_t09 -- DebateQA Tables 8-9: question sources and their deduplication.

Every question set the project holds, each a named source
(:mod:`nfeval_repro.debateqa.curation.sources`), pooled and deduplicated by the
similarity graph and greedy vertex cover of Appendix A.1
(:mod:`nfeval_repro.debateqa.curation.dedup`): questions per source before and
after, a threshold sweep, the duplicate pairs, and the paper's own source counts beside
them (its sources are not ours). Embeddings and the edges of each threshold come from
the item store where it holds them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t08_t09_question_sources.ipynb`` is written from them."""

    #: run profile: embedded or paper; both embed with the embedder below
    profile: str = "embedded"
    #: random seed: the tie-breaking order of the greedy vertex cover
    seed: int = 0
    #: questions per source (the first in file order), 0 for all
    limit: int = 0
    #: comma-separated question sources
    sources: str = "antique,trec-dl-nf,webglm,debateqa-sample,debateqa-test,debateqa-dev"
    #: cosine at or above which two questions count as duplicates
    threshold: float = 0.85
    #: comma-separated thresholds for the sensitivity table
    sweep: str = "0.75,0.8,0.85,0.9,0.95"
    #: sentence embedder: minilm-l6 or a local sentence-transformers folder
    embedder: str = "minilm-l6"
    #: fetch missing release files (off: local mirror and cache only)
    download: bool = False


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Deduplicate the first ``limit`` questions of each source (0: all) at ``threshold``,
    and count what each threshold of ``sweep`` removes.

    ``frames``: ``duplicate_pairs``, ``threshold_sweep``, ``paper_sources``; ``extra``:
    ``counts`` (per source, with the ``__all__`` total), ``sweep`` (the sweep's counts),
    ``paper``, ``edge_counts``, ``pairs`` and ``skipped`` (source: reason). The embedder
    runs on the profile's device; ``progress``: print what was read and skipped.
    """
    from nfeval_repro.debateqa.curation.dedup import dedup_questions
    from nfeval_repro.debateqa.curation.documents import (
        embed_texts,
        embedder_info,
    )
    from nfeval_repro.debateqa.curation.sources import load_sources
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.tables import join_paper, paper_values

    prof = get_profile(config.profile)
    questions, skipped = load_sources(config.sources.split(","), limit=config.limit,
                                      download=config.download)
    if progress:
        for name, reason in skipped.items():
            print(f"skipped {name}: {reason}")
        print(f"{len(questions)} questions from {len({q.source for q in questions})} sources")
    texts = [q.text for q in questions]
    embeddings = embed_texts(texts, config.embedder, stored=True, device=prof.device)
    result = dedup_questions(questions, threshold=config.threshold, seed=config.seed,
                             model=config.embedder, embeddings=embeddings)
    counts = result.counts()
    totals = pd.DataFrame([{"source": "__all__", **counts[["before", "removed", "after"]].sum()}])
    counts = pd.concat([counts, totals], ignore_index=True)

    ours = counts.melt(id_vars="source", value_vars=["before", "removed", "after"],
                       var_name="stage", value_name="ours")
    paper = paper_values("dq_t08_t09")
    table = join_paper(ours, paper[paper["source"].isin(ours["source"])], on=["source", "stage"])
    table["threshold"] = config.threshold
    table["n_questions"] = len(questions)
    sig = Signature(metric="dedup_vertex_cover", variant="greedy-max-degree-seeded-ties",
                    model=embedder_info(config.embedder, prof.device), seed=config.seed,
                    n=len(questions), extra={"threshold": config.threshold,
                                             "edges": len(result.edges),
                                             "skipped": ",".join(sorted(skipped)) or "none"})

    pairs = result.pairs(texts)
    thresholds = [float(t) for t in config.sweep.split(",") if t.strip()]
    sensitivity = pd.concat([dedup_questions(questions, threshold=t, seed=config.seed,
                                             embeddings=embeddings).counts().assign(threshold=t)
                             for t in thresholds], ignore_index=True)
    return Experiment(
        id="dq_t08_t09", table=table, id_columns=["source", "stage"], signatures=[sig],
        interval="none: exact counts of our question sets before and after deduplication",
        notes="Our sources, not the paper's. Skipped sources (not available on the machine "
              "that ran it; the reasons were printed): " + (", ".join(sorted(skipped)) or "none"),
        frames={"duplicate_pairs": pairs, "threshold_sweep": sensitivity,
                "paper_sources": paper},
        extra={"counts": counts, "sweep": sensitivity, "paper": paper,
               "edge_counts": result.edge_counts(), "pairs": pairs, "skipped": skipped})
