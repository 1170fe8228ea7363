"""Question deduplication by greedy vertex cover (DebateQA Appendix A.1).

DebateQA removes duplicate questions from its pooled sources (4,473 ->
3,216, Section 3.1): questions are vertices, two questions whose embeddings
are similar enough share an edge, and the questions to remove are a vertex
cover of that graph, found greedily because minimum vertex cover is NP-hard
(the paper's footnote). Every edge then loses at least one end, so no two
kept questions are near-duplicates, and a cluster of k rewordings keeps one.

Our copy of the paper does not give A.1's embedding model, threshold or tie
rule, so:

* embeddings: the embedded all-MiniLM-L6-v2 (cosine of L2-normalised rows);
* :data:`DEFAULT_THRESHOLD` = 0.85: on hand-written pairs MiniLM gave
  rewordings of one question 0.84-0.93 ("Is nuclear power safe?" / "Is
  nuclear energy safe?" 0.93; "death penalty" / "capital punishment" 0.90)
  and related but distinct questions 0.41-0.75 ("Should the death penalty be
  abolished?" / "Is the death penalty an effective deterrent?" 0.75), so
  0.85 sits above every distinct pair we tried; looser rewordings (0.78 for
  "climate change caused by humans" / "humans responsible for global
  warming") are kept as two questions;
* greedy rule: repeatedly remove a vertex of highest degree in the remaining
  graph; ties go to the vertex that comes first in a random permutation
  drawn from ``seed``, so a seed fixes the result.

Similarities are computed in row blocks (``block_size`` rows against all
later rows), so memory stays ``block_size x n`` for a few thousand questions.

Whether a pair reaches the threshold is a float comparison, and a cosine
next to it can fall on either side on another CPU. While an item store is
active (:func:`nfeval_repro.store.use_store`), :func:`dedup_questions` reads the
questions' embeddings and the edge list of each threshold from it
(:func:`stored_similarity_edges`, keyed by the embeddings' bytes and the
threshold), so the committed decisions are reused on every machine.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError

__all__ = [
    "DEFAULT_THRESHOLD",
    "DedupResult",
    "dedup_questions",
    "greedy_vertex_cover",
    "similarity_edges",
    "stored_similarity_edges",
]

DEFAULT_THRESHOLD = 0.85

Edge = tuple[int, int, float]


def similarity_edges(embeddings: np.ndarray, threshold: float = DEFAULT_THRESHOLD,
                     block_size: int = 1024) -> list[Edge]:
    """(i, j, cosine) for every pair i < j with cosine >= threshold, sorted by (i, j).

    Rows must be L2-normalised (cosine = dot product).
    """
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2:
        raise NfevalError(f"embeddings must be a 2-d array, not shape {emb.shape}")
    if not -1.0 <= threshold <= 1.0:
        raise NfevalError(f"the similarity threshold must lie in [-1, 1], not {threshold}")
    if block_size < 1:
        raise NfevalError(f"block_size must be >= 1, not {block_size}")
    n = len(emb)
    edges: list[Edge] = []
    for lo in range(0, n, block_size):
        hi = min(lo + block_size, n)
        sims = emb[lo:hi] @ emb[lo:].T  # rows lo..hi against columns lo..n
        rows, cols = np.nonzero(sims >= threshold)
        keep = lo + rows < lo + cols  # strictly above the diagonal
        for r, c in zip(rows[keep], cols[keep]):
            edges.append((int(lo + r), int(lo + c), float(sims[r, c])))
    edges.sort(key=lambda e: (e[0], e[1]))
    return edges


def stored_similarity_edges(embeddings: np.ndarray, threshold: float = DEFAULT_THRESHOLD,
                            block_size: int = 1024) -> list[Edge]:
    """:func:`similarity_edges`, read from the active item store where it holds them.

    The key is the SHA-256 of the float32 embeddings (so vectors read from the
    store give the same key on every machine) and the threshold; without an
    active store this only computes.
    """
    from nfeval_repro.store import cached_steps

    emb = np.ascontiguousarray(np.asarray(embeddings, dtype="<f4"))
    spec = {"embeddings_sha256": hashlib.sha256(emb.tobytes()).hexdigest(),
            "shape": list(emb.shape), "threshold": float(threshold)}
    value = cached_steps("dedup-edges", [spec], lambda _: [
        [[i, j, c] for i, j, c in similarity_edges(emb, threshold, block_size)]])[0]
    return [(int(i), int(j), float(c)) for i, j, c in value]


def greedy_vertex_cover(n: int, edges: Sequence[tuple[int, int] | Edge],
                        seed: int = 0) -> list[int]:
    """Vertices removed by the greedy rule (highest remaining degree first), in removal order.

    Ties in degree are broken by a permutation of ``range(n)`` drawn from
    ``seed``. Self-loops are ignored; repeated edges count once.
    """
    adj: list[set[int]] = [set() for _ in range(n)]
    for e in edges:
        i, j = int(e[0]), int(e[1])
        if not (0 <= i < n and 0 <= j < n):
            raise NfevalError(f"edge ({i}, {j}) names a vertex outside 0..{n - 1}")
        if i != j:
            adj[i].add(j)
            adj[j].add(i)
    rank = np.empty(n, dtype=int)
    rank[np.random.default_rng(seed).permutation(n)] = np.arange(n)
    heap = [(-len(a), int(rank[v]), v) for v, a in enumerate(adj) if a]
    heapq.heapify(heap)
    removed: list[int] = []
    while heap:
        neg_deg, _, v = heapq.heappop(heap)
        if not adj[v] or -neg_deg != len(adj[v]):  # stale: a fresher entry is queued
            continue
        removed.append(v)
        for u in adj[v]:
            adj[u].discard(v)
            if adj[u]:
                heapq.heappush(heap, (-len(adj[u]), int(rank[u]), u))
        adj[v] = set()
    return removed


@dataclass
class DedupResult:
    """What deduplication kept and removed. Ids are ``(source, question_id)`` pairs."""

    ids: list[tuple[str, str]]  # every input question, in input order
    kept: list[tuple[str, str]]
    removed: list[tuple[str, str]]  # in removal order
    edges: list[Edge]  # (i, j, cosine) over positions in ``ids``
    threshold: float
    seed: int
    model: str
    removed_by: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def counts(self) -> pd.DataFrame:
        """Per source: questions ``before``, ``removed``, ``after`` (source order of first use)."""
        sources = list(dict.fromkeys(s for s, _ in self.ids))
        before = pd.Series([s for s, _ in self.ids]).value_counts()
        gone = pd.Series([s for s, _ in self.removed], dtype=object).value_counts()
        rows = [{"source": s, "before": int(before.get(s, 0)),
                 "removed": int(gone.get(s, 0))} for s in sources]
        out = pd.DataFrame(rows, columns=["source", "before", "removed"])
        out["after"] = out["before"] - out["removed"]
        return out

    def edge_counts(self) -> pd.DataFrame:
        """Similarity edges per (source, source) pair, within and across sources."""
        pairs = [tuple(sorted((self.ids[i][0], self.ids[j][0]))) for i, j, _ in self.edges]
        if not pairs:
            return pd.DataFrame(columns=["source_a", "source_b", "edges"])
        s = pd.Series(pairs).value_counts()
        return pd.DataFrame([{"source_a": a, "source_b": b, "edges": int(c)}
                             for (a, b), c in sorted(s.items())])

    def pairs(self, texts: Sequence[str]) -> pd.DataFrame:
        """The similar pairs as a table (ids, texts, cosine), most similar first."""
        rows = [{"source_a": self.ids[i][0], "id_a": self.ids[i][1], "text_a": texts[i],
                 "source_b": self.ids[j][0], "id_b": self.ids[j][1], "text_b": texts[j],
                 "cosine": c} for i, j, c in self.edges]
        cols = ["source_a", "id_a", "text_a", "source_b", "id_b", "text_b", "cosine"]
        return pd.DataFrame(rows, columns=cols).sort_values(
            "cosine", ascending=False, kind="stable").reset_index(drop=True)


def dedup_questions(questions: Sequence[Sequence[str]], *, threshold: float = DEFAULT_THRESHOLD,
                    seed: int = 0, model: str = "minilm-l6", embeddings: np.ndarray | None = None,
                    block_size: int = 1024, device: str | None = None) -> DedupResult:
    """Deduplicate ``(source, question_id, text)`` triples (e.g. :class:`SourcedQuestion`).

    ``embeddings`` (L2-normalised rows, one per question) skips the encoder,
    so tests and callers with their own vectors need no model; otherwise ``model``
    embeds the questions on ``device``.
    """
    triples = [tuple(q) for q in questions]
    for k, q in enumerate(triples):
        if len(q) != 3 or not all(isinstance(x, str) for x in q):
            raise NfevalError(f"question {k} is not a (source, question_id, text) of strings: {q!r}")
    ids = [(s, qid) for s, qid, _ in triples]
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        raise NfevalError(f"question ids occur twice: {sorted(dup)[:5]}")
    texts = [t for _, _, t in triples]
    if embeddings is None:
        from nfeval_repro.debateqa.curation.documents import embed_texts

        embeddings = (embed_texts(texts, model, stored=True, device=device) if texts
                      else np.zeros((0, 1), np.float32))
        used_model = model
    else:
        embeddings = np.asarray(embeddings)
        if len(embeddings) != len(texts):
            raise NfevalError(f"{len(embeddings)} embeddings for {len(texts)} questions")
        used_model = "given"
    edges = stored_similarity_edges(embeddings, threshold, block_size)
    order = greedy_vertex_cover(len(ids), edges, seed)
    gone = set(order)
    # Which kept question each removed one duplicates (its most similar kept neighbour).
    best: dict[int, tuple[float, int]] = {}
    for i, j, c in edges:
        for a, b in ((i, j), (j, i)):
            if a in gone and b not in gone and c > best.get(a, (-2.0, -1))[0]:
                best[a] = (c, b)
    return DedupResult(
        ids=ids,
        kept=[q for k, q in enumerate(ids) if k not in gone],
        removed=[ids[k] for k in order],
        edges=edges,
        threshold=threshold,
        seed=seed,
        model=used_model,
        removed_by={ids[a]: ids[b] for a, (_, b) in sorted(best.items())},
    )
