"""dq_f11 -- DebateQA Figure 11: question-to-chunk similarity of the documents.

Appendix A.2 cuts each question's documents into 1000-token chunks and averages the
cosine of the question with each chunk (gte-Qwen2-1.5B-instruct: 0.56 on average). Here:
the sample questions with at least ``min_docs`` trusted documents, their ``top_docs``
best trusted documents (``retriever``), chunks of ``max_tokens`` embedder tokens, and
the sentence embedder ``embedder`` in two modes
(:func:`nfeval_repro.debateqa.curation.chunking.question_chunk_similarity`), plus
a baseline: each question against the next kept question's documents. Every embedding
goes through the item store.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

BASELINE_MODE = "truncate-other-question"


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f11_chunk_similarity.ipynb`` is written from them."""

    #: run profile: embedded or paper; both embed with the embedder below
    profile: str = "embedded"
    #: random seed of the bootstrap intervals (embeddings and chunking are deterministic)
    seed: int = 0
    #: sample questions (the first by id), 0 for all
    limit: int = 0
    #: document collection file; empty: the project collection in data/debateqa_docs
    documents: str = ""
    #: comma-separated trusted TLDs (Table 10)
    tlds: str = "gov,edu,org,pro,info"
    #: keep questions with at least this many trusted documents
    min_docs: int = 3
    #: documents per question (the paper keeps the top 5)
    top_docs: int = 5
    #: linked (own documents ranked by BM25), bm25 or dense over all trusted documents
    retriever: str = "linked"
    #: chunk size in embedder tokens (the paper uses 1000)
    max_tokens: int = 1000
    #: sentence embedder: minilm-l6 or a local sentence-transformers folder
    embedder: str = "minilm-l6"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 11 on the first ``limit`` sample questions (0: all) and ``documents`` (empty:
    the project collection); the embedder runs on the profile's device.

    ``frames``: ``chunk_cosines`` (every chunk's cosine, the baseline's included) and
    ``retrieved``; ``extra``: ``sims`` (the two modes), ``others`` (the baseline),
    ``summary`` and ``paper`` (the paper's values). ``progress``: print the sizes.
    """
    from nfeval.data.sample import load_sample
    from nfeval_repro.debateqa.curation.chunking import (
        question_chunk_similarity,
        similarity_summary,
    )
    from nfeval_repro.debateqa.curation.documents import (
        DOCS_FILE,
        documents_per_question,
        embedder_info,
        embedder_tokenizer,
        load_documents,
        retrieve,
        trusted_documents,
    )
    from nfeval.hashing import sha256_file
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.tables import join_paper, paper_values

    device = get_profile(config.profile).device
    trusted_list = [t.strip() for t in config.tlds.split(",") if t.strip()]
    docs_path = config.documents or DOCS_FILE
    sample = load_sample().limit(config.limit)
    docs = load_documents(docs_path)
    trusted = trusted_documents(docs, trusted_list)
    per_question = documents_per_question(docs, list(sample.items), trusted_list, config.min_docs)
    kept = per_question.loc[per_question["kept"], "question_id"].tolist()
    questions = {q: sample.items[q].question for q in kept}
    if progress:
        print(f"{len(questions)} of {len(sample.items)} questions have >= {config.min_docs} "
              "trusted documents")

    hits = retrieve(questions, trusted, k=config.top_docs, method=config.retriever,
                    model=config.embedder, device=device)
    by_id = {d.doc_id: d for d in trusted}
    chosen = {q: [by_id[i] for i in part["doc_id"]] for q, part in hits.groupby("question_id")}
    tokenizer = embedder_tokenizer(config.embedder, device)
    sims = question_chunk_similarity(questions, chosen, tokenizer, config.max_tokens,
                                     config.embedder, device=device)
    # Baseline: each question against the next kept question's documents (a fixed rotation).
    rotated = dict(zip(kept, kept[1:] + kept[:1]))
    others = question_chunk_similarity(questions, {q: chosen.get(rotated[q], []) for q in kept},
                                       tokenizer, config.max_tokens, config.embedder,
                                       modes=["truncate"], device=device)
    others["mode"] = BASELINE_MODE
    cosines = pd.concat([sims, others], ignore_index=True)
    summary = similarity_summary(cosines, seed=config.seed)
    if progress:
        print(f"{len(hits)} documents, {len(sims) // max(sims['mode'].nunique(), 1)} chunks; "
              f"{hits['linked'].mean():.0%} of the retrieved documents were written for their "
              "question")

    paper = paper_values("dq_f11")
    table = pd.concat([join_paper(summary[summary["mode"] != BASELINE_MODE], paper,
                                  on=["level", "statistic"]),
                       summary[summary["mode"] == BASELINE_MODE]], ignore_index=True)
    table["model"] = config.embedder
    table["paper_model"] = table["paper"].notna().map({True: "gte-Qwen2-1.5B-instruct",
                                                       False: ""})
    sig = Signature(metric="question_chunk_cosine", variant=f"chunks-{config.max_tokens}-tokens",
                    model=embedder_info(config.embedder, device), seed=config.seed,
                    n=len(questions),
                    extra={"retriever": config.retriever, "top_docs": config.top_docs,
                           "min_docs": config.min_docs, "tlds": ",".join(trusted_list),
                           "documents_sha256": sha256_file(docs_path)})
    return Experiment(
        id="dq_f11", table=table, id_columns=["mode", "level", "statistic"], signatures=[sig],
        interval="questions", parameters={"documents": str(config.documents)},
        notes="MiniLM cosines on the project's collection beside the paper's gte-Qwen2-1.5B "
              "mean on its web pages: different embedders and documents. Intervals: the "
              "two means, bootstrap over questions (chunks resampled with their question); "
              "the other statistics describe the sample.",
        frames={"chunk_cosines": cosines, "retrieved": hits},
        extra={"sims": sims, "others": others, "summary": summary, "paper": paper})
