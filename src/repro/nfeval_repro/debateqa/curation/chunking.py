"""Chunking of documents by characters or tokens, with LangChain's recursive splitter.

DebateQA cuts documents into roughly 2000-character chunks with LangChain's
``RecursiveCharacterTextSplitter`` for its RAG baselines (Appendix D.1) and into
1000-token chunks to measure their relevance (Appendix A.2, Figure 11). Both go
through that splitter here (``langchain-text-splitters``, pinned in
requirements.txt) with its default separators: paragraph break, line break,
space, then single characters; pieces are merged greedily back up to the
budget, and every chunk is stripped of surrounding whitespace.

Settings the paper does not state, and ours:

* no overlap (``CHUNK_OVERLAP``; LangChain's default is 200 characters), so the
  ten chunks a RAG answer reads do not repeat text and every non-space
  character of a document lies in exactly one chunk (tested);
* token chunks count the embedder's tokens
  (``RecursiveCharacterTextSplitter.from_huggingface_tokenizer``), the same
  splitter with another length function; the paper does not say how it cut its
  1000-token chunks.

A word longer than the budget is cut between characters, as LangChain does.
Only at degenerate budgets (one character or token) can the splitter return a
whitespace-only piece; callers drop those. An empty text gives no chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from langchain_text_splitters import RecursiveCharacterTextSplitter

from nfeval.errors import NfevalError

__all__ = ["CHUNK_OVERLAP", "EMBEDDING_MODES", "chunk_chars", "chunk_tokens", "embed_long_texts",
           "question_chunk_similarity", "similarity_summary"]

CHUNK_OVERLAP = 0  # the paper states none; LangChain's default would repeat 200 characters


def _check(text: str, budget: int) -> None:
    if not isinstance(text, str):
        raise NfevalError(f"chunking needs a string, not {type(text).__name__}")
    if budget < 1:
        raise NfevalError(f"the chunk budget must be >= 1, not {budget}")


def chunk_chars(text: str, max_chars: int = 2000) -> list[str]:
    """Chunks of at most ``max_chars`` characters, stripped; Appendix D.1 uses about 2000."""
    _check(text, max_chars)
    return RecursiveCharacterTextSplitter(chunk_size=max_chars,
                                          chunk_overlap=CHUNK_OVERLAP).split_text(text)


def chunk_tokens(text: str, tokenizer, max_tokens: int = 1000) -> list[str]:
    """Chunks of at most ``max_tokens`` tokens, stripped; Appendix A.2 uses 1000.

    ``tokenizer``: a Hugging Face tokenizer (a piece's length is the number of
    tokens ``tokenizer.tokenize`` gives it), or None to count
    whitespace-separated words.
    """
    _check(text, max_tokens)
    if tokenizer is None:
        splitter = RecursiveCharacterTextSplitter(chunk_size=max_tokens,
                                                  chunk_overlap=CHUNK_OVERLAP,
                                                  length_function=lambda t: len(t.split()))
    else:
        from transformers import PreTrainedTokenizerBase

        if not isinstance(tokenizer, PreTrainedTokenizerBase):
            raise NfevalError("chunk_tokens needs a Hugging Face tokenizer (for example "
                              "embedder_tokenizer()), or None to count whitespace words, not "
                              f"{type(tokenizer).__name__}.")
        splitter = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
            tokenizer, chunk_size=max_tokens, chunk_overlap=CHUNK_OVERLAP)
    return splitter.split_text(text)


def embed_long_texts(texts: Sequence[str], tokenizer, model: str = "minilm-l6",
                     window_tokens: int = 250, *, stored: bool = False,
                     device: str | None = None) -> np.ndarray:
    """One L2-normalised embedding per text: the mean over its ``window_tokens`` windows.

    MiniLM reads at most 256 word pieces, so a 1000-token chunk embedded
    directly is the embedding of its first quarter. This embeds each window
    (:func:`chunk_tokens`) and averages, a stand-in for the long-context
    gte-Qwen2-1.5B of Appendix A.2 (our choice, not the paper's). ``stored``: the
    windows' embeddings go through the active item store
    (:func:`nfeval_repro.debateqa.curation.documents.embed_texts`, on ``device``).
    """
    from nfeval_repro.debateqa.curation.documents import embed_texts

    windows: list[str] = []
    owner: list[int] = []
    for i, t in enumerate(texts):
        parts = [w for w in chunk_tokens(t, tokenizer, window_tokens) if w.strip()] or [t]
        windows.extend(parts)
        owner.extend([i] * len(parts))
    emb = embed_texts(windows, model, stored=stored, device=device)
    out = np.zeros((len(texts), emb.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owner, dtype=int), emb)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)


EMBEDDING_MODES = ("truncate", "window-mean")


def exact_dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` of two float32 vectors, exactly rounded: each product is exact in float64 and
    ``math.fsum`` rounds the sum once, so every CPU gets the same bits (a float32 BLAS dot
    sums in the order its kernel picks and moves the 7th digit)."""
    import math

    return math.fsum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64))


def question_chunk_similarity(questions: dict[int, str], docs: dict[int, Sequence],
                              tokenizer, max_tokens: int = 1000, model: str = "minilm-l6",
                              modes: Sequence[str] = EMBEDDING_MODES, *, stored: bool = True,
                              device: str | None = None):
    """Cosine(question, chunk) for every ~``max_tokens`` chunk of each question's documents.

    Appendix A.2 / Figure 11: "We segment each document into 1000-token chunks
    and average the cosine similarities for each question and corresponding
    trunks, computed by gte-Qwen2-1.5B-instruct". ``docs`` maps a question id
    to its :class:`~nfeval_repro.debateqa.curation.documents.Document` list. ``modes``: how a
    chunk longer than the embedder's window is embedded: ``"truncate"`` (the
    model reads its first tokens, MiniLM 256) or ``"window-mean"``
    (:func:`embed_long_texts`). One row per (mode, question, document, chunk),
    with the chunk's token count; whitespace-only chunks are skipped. While an item
    store is active (and ``stored``), every embedding is read from / kept in it, so a
    rerun on another CPU computes the cosines from the committed vectors. ``device``: where
    the embedder runs.
    """
    import pandas as pd

    from nfeval_repro.debateqa.curation.documents import embed_texts

    bad = [m for m in modes if m not in EMBEDDING_MODES]
    if bad:
        raise NfevalError(f"unknown embedding modes {bad}; use {EMBEDDING_MODES}")
    meta, chunks = [], []
    for qid in questions:
        for d in docs.get(qid, []):
            for j, c in enumerate(x for x in chunk_tokens(d.text, tokenizer, max_tokens)
                                  if x.strip()):
                n = len(tokenizer(c, add_special_tokens=False, verbose=False)["input_ids"]) \
                    if tokenizer is not None else len(c.split())
                meta.append({"question_id": qid, "doc_id": d.doc_id, "chunk": j,
                             "n_tokens": n, "n_chars": len(c)})
                chunks.append(c)
    qids = list(questions)
    q_emb = dict(zip(qids, embed_texts([questions[q] for q in qids], model, stored=stored,
                                       device=device)))
    frames = []
    for mode in modes:
        emb = embed_texts(chunks, model, stored=stored, device=device) if mode == "truncate" \
            else embed_long_texts(chunks, tokenizer, model, stored=stored, device=device)
        cos = [exact_dot(q_emb[m["question_id"]], e) for m, e in zip(meta, emb)]
        frames.append(pd.DataFrame(meta).assign(mode=mode, cosine=cos))
    cols = ["mode", "question_id", "doc_id", "chunk", "n_tokens", "n_chars", "cosine"]
    if not frames or not meta:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def similarity_summary(frame, *, seed: int = 0):
    """Statistics of :func:`question_chunk_similarity` rows, long form, with 95% intervals.

    ``level="question"``: over per-question means (the paper's averaging);
    ``level="chunk"``: over all chunks. Statistics: n, mean, std, min, q25,
    median, q75, max. The two means carry a bootstrap interval over questions
    (``ci_low``, ``ci_high``; the chunk mean resamples questions with all their
    chunks, :func:`nfeval.metrics.intervals.cluster_interval`), seeded by
    ``seed`` and the row's name; the other statistics describe the sample and
    have none. ``n_questions``: the questions the mode's rows rest on.
    """
    import pandas as pd

    from nfeval.metrics.intervals import cluster_interval, mean_interval

    rows = []
    for mode, part in frame.groupby("mode", sort=False):
        per_question = part.groupby("question_id")["cosine"]
        clusters = [g.to_numpy(dtype=float) for _, g in per_question]
        n_q = len(clusters)
        for level, values in (("question", per_question.mean()), ("chunk", part["cosine"])):
            stats = {"n": len(values), "mean": values.mean(), "std": values.std(ddof=1),
                     "min": values.min(), "q25": values.quantile(0.25),
                     "median": values.median(), "q75": values.quantile(0.75),
                     "max": values.max()}
            key = f"question-chunk-cosine/{mode}/{level}/mean"
            ci = (mean_interval(values.to_numpy(), seed=seed, key=key) if level == "question"
                  else cluster_interval(clusters, lambda cs: float(np.concatenate(cs).mean()),
                                        seed=seed, key=key))
            rows += [{"mode": mode, "level": level, "statistic": k, "ours": float(v),
                      "ci_low": ci.low if k == "mean" else np.nan,
                      "ci_high": ci.high if k == "mean" else np.nan,
                      "n_questions": n_q}
                     for k, v in stats.items()]
    return pd.DataFrame(rows, columns=["mode", "level", "statistic", "ours", "ci_low",
                                       "ci_high", "n_questions"])
