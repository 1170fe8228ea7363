"""Lossless chunking of documents by characters or tokens.

DebateQA cuts documents into 1000-token chunks to measure their relevance
(Appendix A.2, Figure 11) and into roughly 2000-character chunks with
LangChain's ``RecursiveCharacterTextSplitter`` for its RAG baselines
(Section 5.4). This module is the project's own splitter in the same spirit:
split at paragraph breaks, then sentence ends, then between words, then
(for over-long whitespace runs only) between characters, and merge the
pieces greedily back up to the budget.

Guarantees (tested): ``"".join(chunks) == text`` (no character lost, none
repeated; every separator stays attached to the piece before it), and every
chunk fits the budget unless it is one word (a run of non-space characters)
that alone exceeds it. Unlike LangChain's splitter there is no overlap and
no whitespace is stripped. An empty text gives no chunks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

import numpy as np

from nfeval import NfevalError

__all__ = ["EMBEDDING_MODES", "chunk_chars", "chunk_spans", "chunk_tokens", "embed_long_texts",
           "question_chunk_similarity", "similarity_summary"]

# Each level splits *after* its separator, so pieces keep their separators.
_LEVELS = (
    re.compile(r"\n[ \t\r\f\v]*\n\s*"),  # paragraph break (blank line) and what follows
    re.compile(r"(?<=[.!?\u3002\uff01\uff1f])[\"'\u201d\u2019)\]]*\s+"),  # sentence end
    re.compile(r"\s+"),  # between words
)
_ATOM = re.compile(r"\S+|\s")  # a word, or one whitespace character

Span = tuple[int, int]


def _cut(text: str, span: Span, pattern: re.Pattern) -> list[Span]:
    start, end = span
    out, pos = [], start
    for m in pattern.finditer(text, start, end):
        if m.end() > pos and m.end() < end:
            out.append((pos, m.end()))
            pos = m.end()
    out.append((pos, end))
    return out


def _merge(spans: list[Span], size: Callable[[int, int], int], budget: int) -> list[Span]:
    out: list[Span] = []
    for s, e in spans:
        if out and size(out[-1][0], e) <= budget:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _split(text: str, span: Span, size: Callable[[int, int], int], budget: int,
           level: int) -> list[Span]:
    if size(*span) <= budget:
        return [span]
    if level < len(_LEVELS):
        pieces = _cut(text, span, _LEVELS[level])
    else:  # words alone over budget stay whole; whitespace splits per character
        pieces = [(span[0] + m.start(), span[0] + m.end())
                  for m in _ATOM.finditer(text[span[0]:span[1]])]
        return _merge(pieces, size, budget)
    if len(pieces) == 1:
        return _split(text, span, size, budget, level + 1)
    out: list[Span] = []
    for piece in pieces:
        out.extend(_split(text, piece, size, budget, level + 1))
    return _merge(out, size, budget)


def chunk_spans(text: str, size: Callable[[int, int], int], budget: int) -> list[Span]:
    """(start, end) character spans covering ``text`` in order, each of ``size`` <= budget.

    ``size(start, end)`` measures ``text[start:end]`` (characters, tokens...).
    """
    if not isinstance(text, str):
        raise NfevalError(f"chunking needs a string, not {type(text).__name__}")
    if budget < 1:
        raise NfevalError(f"the chunk budget must be >= 1, not {budget}")
    if not text:
        return []
    return _split(text, (0, len(text)), size, budget, 0)


def chunk_chars(text: str, max_chars: int = 2000) -> list[str]:
    """Chunks of at most ``max_chars`` characters (unless one word is longer).

    ``"".join(chunk_chars(t)) == t``; the RAG baselines of Section 5.4 use about 2000.
    """
    return [text[s:e] for s, e in chunk_spans(text, lambda s, e: e - s, max_chars)]


def _token_starts(text: str, tokenizer) -> list[int] | None:
    """Sorted start offsets of the tokens of ``text``; None for whitespace tokens."""
    if tokenizer is None:
        return None
    if not getattr(tokenizer, "is_fast", False):
        raise NfevalError("chunk_tokens needs a fast (Rust) Hugging Face tokenizer, which "
                          "gives character offsets, or None for whitespace tokens.")
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                    return_attention_mask=False, verbose=False)
    return sorted(s for s, e in enc["offset_mapping"] if e > s)


def chunk_tokens(text: str, tokenizer, max_tokens: int = 1000) -> list[str]:
    """Chunks of at most ``max_tokens`` tokens (unless one word is longer); lossless.

    ``tokenizer``: a fast Hugging Face tokenizer (tokens are counted once on
    the whole text, a token belonging to the chunk its first character falls
    in), or None to count whitespace-separated words. Appendix A.2 uses 1000.
    """
    if not isinstance(text, str):
        raise NfevalError(f"chunking needs a string, not {type(text).__name__}")
    starts = _token_starts(text, tokenizer) if text else []
    if starts is None:
        word_starts = [m.start() for m in re.finditer(r"\S+", text)]
        starts = word_starts

    def size(s: int, e: int) -> int:
        return bisect.bisect_left(starts, e) - bisect.bisect_left(starts, s)

    return [text[s:e] for s, e in chunk_spans(text, size, max_tokens)]


def embed_long_texts(texts: Sequence[str], tokenizer, model: str = "minilm-l6",
                     window_tokens: int = 250, *, stored: bool = False) -> np.ndarray:
    """One L2-normalised embedding per text: the mean over its ``window_tokens`` windows.

    MiniLM reads at most 256 word pieces, so a 1000-token chunk embedded
    directly is the embedding of its first quarter. This embeds each window
    (:func:`chunk_tokens`) and averages, a stand-in for the long-context
    gte-Qwen2-1.5B of Appendix A.2 (our choice, not the paper's). ``stored``: the
    windows' embeddings go through the active item store
    (:func:`nfeval.debateqa.experiments.curation.documents.embed_texts`).
    """
    from nfeval.debateqa.experiments.curation.documents import embed_texts

    windows: list[str] = []
    owner: list[int] = []
    for i, t in enumerate(texts):
        parts = [w for w in chunk_tokens(t, tokenizer, window_tokens) if w.strip()] or [t]
        windows.extend(parts)
        owner.extend([i] * len(parts))
    emb = embed_texts(windows, model, stored=stored)
    out = np.zeros((len(texts), emb.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owner, dtype=int), emb)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)


EMBEDDING_MODES = ("truncate", "window-mean")


def question_chunk_similarity(questions: dict[int, str], docs: dict[int, Sequence],
                              tokenizer, max_tokens: int = 1000, model: str = "minilm-l6",
                              modes: Sequence[str] = EMBEDDING_MODES, *, stored: bool = True):
    """Cosine(question, chunk) for every ~``max_tokens`` chunk of each question's documents.

    Appendix A.2 / Figure 11: "We segment each document into 1000-token chunks
    and average the cosine similarities for each question and corresponding
    trunks, computed by gte-Qwen2-1.5B-instruct". ``docs`` maps a question id
    to its :class:`~nfeval.debateqa.experiments.curation.documents.Document` list. ``modes``: how a
    chunk longer than the embedder's window is embedded: ``"truncate"`` (the
    model reads its first tokens, MiniLM 256) or ``"window-mean"``
    (:func:`embed_long_texts`). One row per (mode, question, document, chunk),
    with the chunk's token count; whitespace-only chunks are skipped. While an item
    store is active (and ``stored``), every embedding is read from / kept in it, so a
    rerun on another CPU computes the cosines from the committed vectors.
    """
    import pandas as pd

    from nfeval.debateqa.experiments.curation.documents import embed_texts

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
    q_emb = dict(zip(qids, embed_texts([questions[q] for q in qids], model, stored=stored)))
    frames = []
    for mode in modes:
        emb = embed_texts(chunks, model, stored=stored) if mode == "truncate" else \
            embed_long_texts(chunks, tokenizer, model, stored=stored)
        cos = [float(q_emb[m["question_id"]] @ e) for m, e in zip(meta, emb)]
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
