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

__all__ = ["chunk_chars", "chunk_tokens", "chunk_spans", "embed_long_texts"]

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
                     window_tokens: int = 250) -> np.ndarray:
    """One L2-normalised embedding per text: the mean over its ``window_tokens`` windows.

    MiniLM reads at most 256 word pieces, so a 1000-token chunk embedded
    directly is the embedding of its first quarter. This embeds each window
    (:func:`chunk_tokens`) and averages, a stand-in for the long-context
    gte-Qwen2-1.5B of Appendix A.2 (our choice, not the paper's).
    """
    from nfeval.curation.documents import embed_texts

    windows: list[str] = []
    owner: list[int] = []
    for i, t in enumerate(texts):
        parts = [w for w in chunk_tokens(t, tokenizer, window_tokens) if w.strip()] or [t]
        windows.extend(parts)
        owner.extend([i] * len(parts))
    emb = embed_texts(windows, model)
    out = np.zeros((len(texts), emb.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owner, dtype=int), emb)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)
