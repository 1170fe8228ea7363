"""dq_t07 -- DebateQA Table 7: RAG on all documents vs on trustworthy documents only.

Every generator answers each question with vanilla RAG twice
(:mod:`nfeval_repro.debateqa.rag`): retrieving from the whole document
collection (dq_t06's answers) and only from documents under the trusted
top-level domains of the paper's Table 10. The table
(:func:`~nfeval_repro.debateqa.rag.rag_table`) holds the means, trusted
minus all documents, and the share of trusted chunks. Table 7's numbers are
not printed in the paper's text.
"""

from __future__ import annotations

import pandas as pd

from nfeval_repro.debateqa.rag import load_generator, rag_answers, rag_experiment, rag_setup
from nfeval.hashing import sha256_text
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment

__all__ = ["run"]

ID = "dq_t07"
#: the arms: which documents vanilla RAG retrieves from (trusted_only)
DOCUMENTS = (("all", False), ("trusted", True))
NOTES = ("Vanilla RAG on the project's document collection, all documents vs those "
         "under the trusted TLDs the paper's text names. quantity mean: 95% bootstrap "
         "interval over questions; difference: trusted minus all, paired bootstrap "
         "over questions; share: trusted chunks / chunks, cluster bootstrap over "
         "questions. Table 7's numbers are not printed in the paper's text.")


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 16, split: str = "sample",
        documents: str = "", generators: str = "smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct",
        max_tokens: int = 256, top_k: int = 10, chunk_chars: int = 2000, k_docs: int = 10,
        backbone: str = "", judge: str = "",
        progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) with vanilla RAG on all documents
    and on the trusted ones, score the answers and assemble Table 7 (``judge="none"``:
    no D.A.).

    Frames ``answers`` (every answer with its chunks) and ``scores``; ``extra``:
    ``answers``, ``scores``, ``items``.
    """
    setup = rag_setup(profile=profile, seed=seed, limit=limit, split=split,
                      documents=documents, generators=generators, chunk_chars=chunk_chars,
                      k_docs=k_docs, backbone=backbone, judge=judge)
    frames = []
    for g in setup.generators:
        model = load_generator(g, setup.profile.generator_backend, load=setup.profile.load)
        frames += [rag_answers(model, setup.items, setup.index, "vanilla", trusted_only=only,
                               k=top_k, max_tokens=max_tokens, seed=seed, progress=progress)
                   .assign(generator=g, documents=kind) for kind, only in DOCUMENTS]
        del model
    return rag_experiment(
        ID, setup, pd.concat(frames, ignore_index=True), arm="documents",
        order=[kind for kind, _ in DOCUMENTS], pairs=[("trusted", "all")],
        answer_columns=["answer", "n_tokens", "finish_reason", "n_chunks", "n_trusted_chunks",
                        "chunk_ids"],
        prompt_sha256=sha256_text(prompt_text("rag_answer")), notes=NOTES, seed=seed,
        top_k=top_k, progress=progress)
