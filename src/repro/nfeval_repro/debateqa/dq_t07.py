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

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.rag import (RagArms, RagConfig, RagSettings, load_generator,
                                       rag_answers, rag_experiment, rag_setup)
from nfeval.hashing import sha256_text
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_t07"
#: the arms: which documents vanilla RAG retrieves from (trusted_only)
DOCUMENTS = (("all", False), ("trusted", True))
#: the arms' column and order, trusted minus all documents, and the answers frame's columns
#: after ``generator, documents, id``
ARMS = RagArms(column="documents", order=tuple(kind for kind, _ in DOCUMENTS),
               pairs=(("trusted", "all"),),
               answer_columns=("answer", "n_tokens", "finish_reason", "n_chunks",
                               "n_trusted_chunks", "chunk_ids"))
NOTES = ("Vanilla RAG on the project's document collection, all documents vs those "
         "under the trusted TLDs the paper's text names. quantity mean: 95% bootstrap "
         "interval over questions; difference: trusted minus all, paired bootstrap "
         "over questions; share: trusted chunks / chunks, cluster bootstrap over "
         "questions. Table 7's numbers are not printed in the paper's text.")


@dataclass(frozen=True)
class Config(RagConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t07_rag_trusted.ipynb`` is written from them (those of :class:`RagConfig`)."""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) with vanilla RAG on all documents
    and on the trusted ones, score the answers and assemble Table 7 (``judge="none"``:
    no D.A.).

    Frames ``answers`` (every answer with its chunks) and ``scores``; ``extra``:
    ``answers``, ``scores``, ``items``.
    """
    setup = rag_setup(profile=config.profile, seed=config.seed, limit=config.limit,
                      split=config.split, documents=config.documents,
                      generators=config.generators, chunk_chars=config.chunk_chars,
                      k_docs=config.k_docs, backbone=config.backbone, judge=config.judge)
    decoding = Decoding(max_tokens=config.max_tokens, seed=config.seed)
    frames = []
    for g in setup.generators:
        model = load_generator(g, setup.profile.generator_backend, load=setup.profile.load)
        frames += [rag_answers(model, setup.items, setup.index, "vanilla",
                               settings=RagSettings(trusted_only=only, k=config.top_k),
                               decoding=decoding, progress=progress)
                   .assign(generator=g, documents=kind)
                   for kind, only in DOCUMENTS]
        del model
    return rag_experiment(
        ID, setup, pd.concat(frames, ignore_index=True), ARMS,
        prompt_sha256=sha256_text(prompt_text("rag_answer")), notes=NOTES, seed=config.seed,
        top_k=config.top_k, progress=progress)
