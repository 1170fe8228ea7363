"""dq_t06 -- DebateQA Table 6: answers without retrieval, with vanilla RAG and with ReAct.

Every generator answers each question three ways (:mod:`nfeval_repro.debateqa.rag`):
without retrieval (dq_t04's answers), from the top ``top_k`` chunks of the
project's document collection (vanilla RAG), and from the chunks its own ReAct
loop gathers. The answers are scored with P.D. and D.A.; the table
(:func:`~nfeval_repro.debateqa.rag.rag_table`) holds the means, vanilla
RAG and ReAct minus no retrieval, the share of trusted chunks and the ReAct
loop's bookkeeping. Table 6's numbers are not printed in the paper's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.rag import (STRATEGIES, RagArms, RagConfig, RagSettings,
                                       load_generator, rag_answers, rag_experiment, rag_setup)
from nfeval.hashing import sha256_text
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_t06"
#: the arms: the strategies, each retrieval one minus no retrieval, and the answers frame's
#: columns after ``generator, strategy, id``
ARMS = RagArms(column="strategy", order=STRATEGIES, pairs=(("vanilla", "none"), ("react", "none")),
               answer_columns=("answer", "n_tokens", "finish_reason", "n_chunks",
                               "n_trusted_chunks", "chunk_ids", "steps", "action_retries",
                               "unparsed_steps", "fallback", "stop", "trace"))
NOTES = ("The project's document collection, BM25 + MiniLM retrieval and prompts "
         "stand in for Google search, gte-Qwen2 and Table 16; the answering model "
         "runs its own ReAct loop (the paper: Claude 3.5 Sonnet). quantity mean: 95% "
         "bootstrap interval over questions; difference: strategy minus no retrieval, "
         "paired bootstrap over questions; share: trusted chunks / chunks, cluster "
         "bootstrap over questions; count: exact ReAct bookkeeping, no interval (NaN "
         "bounds). Table 6's numbers are not printed in the paper's text.")


@dataclass(frozen=True)
class Config(RagConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t06_rag.ipynb`` is written from them (those of :class:`RagConfig`, then
    ReAct's)."""

    #: chunks ReAct may gather (paper: up to 9)
    react_max_chunks: int = 9
    #: ReAct steps at most
    react_steps: int = 4


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) without retrieval, with vanilla RAG
    and with ReAct, score the answers and assemble Table 6 (``judge="none"``: no D.A.).

    Frames ``answers`` (every answer with its chunks and ReAct trace) and ``scores``;
    ``extra``: ``answers``, ``scores``, ``items``.
    """
    setup = rag_setup(profile=config.profile, seed=config.seed, limit=config.limit,
                      split=config.split, documents=config.documents,
                      generators=config.generators, chunk_chars=config.chunk_chars,
                      k_docs=config.k_docs, backbone=config.backbone, judge=config.judge)
    prof, items, index = setup.profile, setup.items, setup.index
    decoding = Decoding(max_tokens=config.max_tokens, seed=config.seed)
    settings = RagSettings(k=config.top_k, max_chunks=config.react_max_chunks,
                           max_steps=config.react_steps)
    frames = []
    for g in setup.generators:
        plain = prof.load(g, backend=prof.generator_backend)  # dq_t04's stored answers
        frames.append(rag_answers(plain, items, index, "none", decoding=decoding,
                                  progress=progress).assign(generator=g))
        del plain
        model = load_generator(g, prof.generator_backend, load=prof.load)  # ten chunks fit
        for strategy in STRATEGIES[1:]:
            frames.append(rag_answers(model, items, index, strategy, settings=settings,
                                      decoding=decoding, progress=progress).assign(generator=g))
        del model
    return rag_experiment(
        ID, setup, pd.concat(frames, ignore_index=True), ARMS,
        prompt_sha256={p: sha256_text(prompt_text(p)) for p in ("rag_answer", "rag_react")},
        notes=NOTES, seed=config.seed, top_k=config.top_k, progress=progress)
