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

import pandas as pd

from nfeval_repro.tables import Experiment, Signature

__all__ = ["run"]

BASELINE_MODE = "truncate-other-question"


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0, documents: str = "",
        tlds: str = "gov,edu,org,pro,info", min_docs: int = 3, top_docs: int = 5,
        retriever: str = "linked", max_tokens: int = 1000, embedder: str = "minilm-l6",
        progress: bool = True) -> Experiment:
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

    device = get_profile(profile).device
    trusted_list = [t.strip() for t in tlds.split(",") if t.strip()]
    docs_path = documents or DOCS_FILE
    sample = load_sample().limit(limit)
    docs = load_documents(docs_path)
    trusted = trusted_documents(docs, trusted_list)
    per_question = documents_per_question(docs, list(sample.items), trusted_list, min_docs)
    kept = per_question.loc[per_question["kept"], "question_id"].tolist()
    questions = {q: sample.items[q].question for q in kept}
    if progress:
        print(f"{len(questions)} of {len(sample.items)} questions have >= {min_docs} "
              "trusted documents")

    hits = retrieve(questions, trusted, k=top_docs, method=retriever, model=embedder,
                    device=device)
    by_id = {d.doc_id: d for d in trusted}
    chosen = {q: [by_id[i] for i in part["doc_id"]] for q, part in hits.groupby("question_id")}
    tokenizer = embedder_tokenizer(embedder, device)
    sims = question_chunk_similarity(questions, chosen, tokenizer, max_tokens, embedder,
                                     device=device)
    # Baseline: each question against the next kept question's documents (a fixed rotation).
    rotated = dict(zip(kept, kept[1:] + kept[:1]))
    others = question_chunk_similarity(questions, {q: chosen.get(rotated[q], []) for q in kept},
                                       tokenizer, max_tokens, embedder, modes=["truncate"],
                                       device=device)
    others["mode"] = BASELINE_MODE
    cosines = pd.concat([sims, others], ignore_index=True)
    summary = similarity_summary(cosines, seed=seed)
    if progress:
        print(f"{len(hits)} documents, {len(sims) // max(sims['mode'].nunique(), 1)} chunks; "
              f"{hits['linked'].mean():.0%} of the retrieved documents were written for their "
              "question")

    paper = paper_values("dq_f11")
    table = pd.concat([join_paper(summary[summary["mode"] != BASELINE_MODE], paper,
                                  on=["level", "statistic"]),
                       summary[summary["mode"] == BASELINE_MODE]], ignore_index=True)
    table["model"] = embedder
    table["paper_model"] = table["paper"].notna().map({True: "gte-Qwen2-1.5B-instruct",
                                                       False: ""})
    sig = Signature(metric="question_chunk_cosine", variant=f"chunks-{max_tokens}-tokens",
                    model=embedder_info(embedder, device), seed=seed, n=len(questions),
                    extra={"retriever": retriever, "top_docs": top_docs, "min_docs": min_docs,
                           "tlds": ",".join(trusted_list),
                           "documents_sha256": sha256_file(docs_path)})
    return Experiment(
        id="dq_f11", table=table, id_columns=["mode", "level", "statistic"], signatures=[sig],
        interval="questions", parameters={"documents": str(documents)},
        notes="MiniLM cosines on the project's collection beside the paper's gte-Qwen2-1.5B "
              "mean on its web pages: different embedders and documents. Intervals: the "
              "two means, bootstrap over questions (chunks resampled with their question); "
              "the other statistics describe the sample.",
        frames={"chunk_cosines": cosines, "retrieved": hits},
        extra={"sims": sims, "others": others, "summary": summary, "paper": paper})
