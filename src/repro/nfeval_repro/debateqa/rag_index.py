"""Retrieval for the RAG answers (DebateQA Appendix D.1): chunks and a two-stage search.

The paper searches Google for the question, loads the top 10 URLs, splits
them into chunks of roughly 2,000 characters (LangChain's
``RecursiveCharacterTextSplitter``) and keeps the 10 chunks most similar to
the question by cosine similarity of gte-Qwen2-1.5B-instruct embeddings.
Offline, :class:`ChunkIndex` mirrors the two stages over the project's own
document collection (:mod:`nfeval_repro.debateqa.curation.documents`): a
BM25 search over whole documents stands in for the search engine (its top
``k_docs`` documents play the top 10 URLs), then those documents' chunks
(:func:`nfeval_repro.debateqa.curation.chunking.chunk_chars`, without
overlap) are ranked by cosine similarity of the profile's embedder (the
embedded MiniLM, not gte-Qwen2; MiniLM reads only the first 256 word pieces of
a chunk). ``trusted_only`` drops documents whose URL fails
:func:`nfeval_repro.debateqa.curation.tld.is_trusted` before the search
(Table 7), as the paper keeps only trusted pages from the search results.

While a notebook's item store is active (:mod:`nfeval_repro.store`) every search
result of the default embedder is stored (``step.rag-search-<embedder>.jsonl``):
the chunks an answer is written from do not depend on the float rounding of
the embedder on another CPU. The answering strategies that use the index are
in :mod:`nfeval_repro.debateqa.rag`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nfeval.errors import NfevalError

CHUNK_CHARS = 2000  # paper D.1: "chunking to roughly 2000-character"
TOP_K = 10  # paper D.1: "the top-10 most relevant chunks"
K_DOCS = 10  # paper D.1: "The top 10 URLs from the search are saved"

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Chunk:
    """A piece of one document. ``id`` is ``"<doc_id>#<k>"`` (k from 0)."""

    id: str
    doc_id: str
    url: str
    title: str
    text: str
    trusted: bool


@dataclass(frozen=True)
class Retrieved:
    chunk: Chunk
    score: float  # cosine similarity to the query


def chunk_documents(documents: Sequence, max_chars: int = CHUNK_CHARS) -> list[Chunk]:
    """Split every document (``nfeval_repro.debateqa.curation.documents.Document``)
    into chunks, marking each as trusted or not by its document's URL (Table 10's TLDs)."""
    from nfeval_repro.debateqa.curation.chunking import chunk_chars
    from nfeval_repro.debateqa.curation.tld import is_trusted

    seen: set[str] = set()
    out: list[Chunk] = []
    for doc in documents:
        if doc.doc_id in seen:
            raise NfevalError(f"document id {doc.doc_id!r} occurs twice in the collection")
        seen.add(doc.doc_id)
        trusted = is_trusted(doc.url)
        pieces = [p for p in chunk_chars(doc.text, max_chars=max_chars) if p.strip()]
        out += [Chunk(f"{doc.doc_id}#{k}", doc.doc_id, doc.url, doc.title, p.strip(), trusted)
                for k, p in enumerate(pieces)]
    return out


class ChunkIndex:
    """Two-stage retrieval over a document collection (see the module docstring).

    ``embed`` maps texts to L2-normalised rows (default: the profile's embedder
    through :func:`nfeval_repro.debateqa.curation.documents.embed_texts`, on
    ``device``: an experiment passes its profile's); tests pass a fake.
    ``k_docs=0`` skips the document stage and ranks every chunk. Chunk
    embeddings are computed on first use and kept, so a query embeds only the
    chunks it has not met before.
    """

    def __init__(self, documents: Sequence, *, embedder: str = "minilm-l6",
                 embed: Embed | None = None, max_chars: int = CHUNK_CHARS, k_docs: int = K_DOCS,
                 store_name: str | None = None, device: str | None = None):
        if not documents:
            raise NfevalError("ChunkIndex: the document collection is empty.")
        if k_docs < 0:
            raise NfevalError(f"k_docs must be >= 0, got {k_docs}.")
        self.documents = list(documents)
        self.chunks = chunk_documents(self.documents, max_chars=max_chars)
        self.embedder = embedder
        self.device = device
        self.k_docs = int(k_docs)
        self.max_chars = int(max_chars)
        self._embed = embed or self._default_embed
        self._by_doc: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            self._by_doc.setdefault(c.doc_id, []).append(i)
        self._vectors: dict[int, np.ndarray] = {}
        self._bm25 = None
        self._by_id = {c.id: c for c in self.chunks}
        # Search results are stored (under an active item store) for the default embedder,
        # or under ``store_name`` for another one; never for an unnamed custom embed.
        self.store_name = store_name or (f"rag-search-{embedder}" if embed is None else None)
        from nfeval.hashing import sha256_text

        self.fingerprint = sha256_text(json.dumps(
            [self.k_docs, self.max_chars, [[c.id, c.url, c.text] for c in self.chunks]],
            ensure_ascii=False))

    def _default_embed(self, texts: Sequence[str]) -> np.ndarray:
        from nfeval_repro.debateqa.curation.documents import embed_texts

        return embed_texts(texts, model=self.embedder, device=self.device)

    def _vectors_of(self, idx: Sequence[int]) -> np.ndarray:
        todo = [i for i in idx if i not in self._vectors]
        if todo:
            vecs = np.asarray(self._embed([self.chunks[i].text for i in todo]), dtype=np.float32)
            self._vectors.update(zip(todo, vecs))
        return np.stack([self._vectors[i] for i in idx])

    def candidate_documents(self, query: str, *, trusted_only: bool = False) -> list[int]:
        """Indices into ``documents`` that the search stage returns, best first."""
        from nfeval_repro.debateqa.curation.tld import is_trusted

        allowed = [i for i, d in enumerate(self.documents)
                   if not trusted_only or is_trusted(d.url)]
        if not self.k_docs:
            return allowed
        if self._bm25 is None:
            from nfeval_repro.debateqa.curation.documents import BM25Index

            self._bm25 = BM25Index([d.text for d in self.documents])
        ok = set(allowed)
        ranked = [i for i, _ in self._bm25.search(query, len(self.documents)) if i in ok]
        return ranked[:self.k_docs]

    def search(self, query: str, k: int = TOP_K, *, trusted_only: bool = False,
               exclude: Sequence[str] = ()) -> list[Retrieved]:
        """The ``k`` chunks most similar to ``query`` (cosine, best first; ties by
        collection order), from the documents the search stage returns, leaving out
        chunk ids in ``exclude``."""
        if not query or not query.strip():
            raise NfevalError("ChunkIndex.search: empty query.")
        if k < 0:
            raise NfevalError(f"k must be >= 0, got {k}.")
        from nfeval_repro.store import active_store, cached_steps

        if self.store_name is None or active_store() is None:
            return self._search(query, k, trusted_only, exclude)
        request = {"index": self.fingerprint, "query": query, "k": int(k),
                   "trusted_only": bool(trusted_only), "exclude": sorted(set(exclude))}
        found = cached_steps(self.store_name, [request], lambda reqs: [
            [[r.chunk.id, r.score] for r in self._search(x["query"], x["k"], x["trusted_only"],
                                                         x["exclude"])] for x in reqs])[0]
        return [Retrieved(self._by_id[cid], float(score)) for cid, score in found]

    def _search(self, query: str, k: int, trusted_only: bool,
                exclude: Sequence[str]) -> list[Retrieved]:
        skip = set(exclude)
        docs = self.candidate_documents(query, trusted_only=trusted_only)
        idx = sorted(i for d in docs for i in self._by_doc.get(self.documents[d].doc_id, ())
                     if self.chunks[i].id not in skip)
        if not idx or k == 0:
            return []
        q = np.asarray(self._embed([query]), dtype=np.float32)[0]
        sims = self._vectors_of(idx) @ q
        order = sorted(range(len(idx)), key=lambda j: (-float(sims[j]), idx[j]))[:k]
        return [Retrieved(self.chunks[idx[j]], float(sims[j])) for j in order]
