"""The project's local document collection and search over it.

DebateQA (Section 3.2, Appendix A.2) searches the Web with Google, keeps
pages under trusted TLDs and reranks them with Bge-Reranker-v2-Gemma; its RAG
baselines (Section 5.4) use dense retrieval with gte-Qwen2-1.5B. None of that
runs offline, so this module stands in for it with a local collection given
as files and two searchers:

* :class:`BM25Index`: Okapi BM25 (Robertson et al., scored by ``bm25s``) over
  lower-cased word tokens, with the non-negative idf
  ``log(1 + (N - df + 0.5) / (df + 0.5))`` (the Lucene form);
* :class:`DenseIndex`: cosine similarity of sentence embeddings, by default
  the embedded all-MiniLM-L6-v2 (:func:`nfeval.models.registry.minilm_path`)
  instead of the paper's gte-Qwen2-1.5B.

Sentence embeddings are floats of a neural model: the last bits differ
between CPUs (SIMD kernels, batch padding), and a cosine next to a
threshold or a tie can then decide a row differently. ``embed_texts(...,
stored=True)`` keeps each call's embeddings in the active item store
(:func:`nfeval_repro.store.cached_steps`, exact float32 as base64, keyed by the
call's list of texts), so a rerun on any machine reads the committed vectors;
without an active store it only computes.

The collection format: one JSON object per line with ``url`` and ``text``
(required), and ``id``, ``question_id`` (the question it was written or found
for, or null for a distractor) and ``title`` (optional).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nfeval.errors import NfevalError
from nfeval_repro.paths import ROOT

__all__ = [
    "DOCS_FILE",
    "BM25Index",
    "DenseIndex",
    "Document",
    "documents_per_question",
    "embed_texts",
    "embedder_info",
    "embedder_key",
    "embedder_tokenizer",
    "load_documents",
    "retrieve",
    "suffix_counts",
    "tokenize",
    "trusted_documents",
]

DOCS_FILE = ROOT / "data" / "debateqa_docs" / "documents.jsonl"


@dataclass(frozen=True)
class Document:
    """One web page of the collection."""

    doc_id: str
    url: str
    text: str
    question_id: int | None = None
    title: str = ""


def _line_error(path: Path, line: int, what: str) -> NfevalError:
    return NfevalError(f"{path}, line {line}: {what}.")


def load_documents(path: str | Path = DOCS_FILE) -> list[Document]:
    """Read a JSON-lines collection; errors name the file and the line (from 1).

    ``id`` defaults to ``"line<N>"``; ids must be unique. Blank lines are errors,
    except a final newline.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        what = "is a folder" if p.is_dir() else "does not exist"
        raise NfevalError(f"document collection {p} {what}; give a JSON-lines file with "
                          "one {\"url\", \"text\"} object per line.")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise NfevalError(f"{p} is not UTF-8 text (byte {e.start}): {e.reason}.") from e
    lines = text.split("\n")
    if lines and not lines[-1].strip():
        lines.pop()
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        fail = functools.partial(_line_error, p, n)
        if not line.strip():
            raise fail("blank line")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise fail(f"invalid JSON: {e.msg} at column {e.colno}") from None
        if not isinstance(obj, dict):
            raise fail("expected a JSON object with url and text")
        url, body = obj.get("url"), obj.get("text")
        if not isinstance(url, str) or not url.strip():
            raise fail("url is missing or not a non-empty string")
        if not isinstance(body, str):
            raise fail("text is missing or not a string")
        doc_id = obj.get("id", f"line{n}")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            raise fail(f"id {doc_id!r} is not a string or an integer")
        doc_id = str(doc_id)
        if doc_id in seen:
            raise fail(f"id {doc_id!r} already used on line {seen[doc_id]}")
        seen[doc_id] = n
        qid = obj.get("question_id")
        if qid is not None and (isinstance(qid, bool) or not isinstance(qid, int)):
            raise fail(f"question_id {qid!r} is not an integer or null")
        title = obj.get("title", "")
        if title is None:
            title = ""
        if not isinstance(title, str):
            raise fail("title is not a string")
        docs.append(Document(doc_id, url.strip(), body, qid, title))
    return docs


# --------------------------------------------------------------------------- BM25

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``), the units BM25 counts."""
    return _WORD.findall(text.lower())


def _top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(index, score) of the k best, best first, ties by the smaller index."""
    if k < 0:
        raise NfevalError(f"k must be >= 0, not {k}")
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [(int(i), float(scores[i])) for i in order]


class BM25Index:
    """Okapi BM25 over ``texts``; ``search`` gives the k best (index, score).

    Scored by ``bm25s`` (Lucene's idf and term weight, float64) on the tokens of
    :func:`tokenize`, times ``k1 + 1`` (the Robertson form's constant, which
    Lucene drops), so a score reads as in the BM25 literature. Every text gets
    a score (0 when it shares no term with the query), so ``search`` returns
    ``min(k, len(texts))`` results.
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75):
        if k1 < 0 or not 0 <= b <= 1:
            raise NfevalError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, not k1={k1}, b={b}")
        self.k1, self.b = float(k1), float(b)
        self.n = len(texts)
        self._index = None
        if self.n:
            import bm25s

            self._index = bm25s.BM25(k1=self.k1, b=self.b, method="lucene",
                                     idf_method="lucene", dtype="float64")
            self._index.index([tokenize(t) for t in texts], show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for ``query`` (repeated query terms count once each)."""
        if not self.n:
            return np.zeros(0)
        terms = [t for t in tokenize(query) if t in self._index.vocab_dict]
        if not terms:
            return np.zeros(self.n)
        return np.asarray(self._index.get_scores(terms), dtype=float) * (self.k1 + 1.0)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The k best (index into texts, score), best first, ties by index."""
        return _top_k(self.scores(query), k)


# --------------------------------------------------------------------------- dense

def _encoder(model: str, device: str | None = None):
    """The sentence embedder ``model`` on ``device`` (default: the environment's runtime,
    :func:`nfeval.runtime.from_env`, as a profile's), loaded once per (model, device)."""
    from nfeval.runtime import from_env, resolve_device

    return _encoder_on(model, resolve_device(device or from_env().device))


@functools.lru_cache(maxsize=4)
def _encoder_on(model: str, device: str):
    from sentence_transformers import SentenceTransformer

    if model in ("minilm-l6", "minilm", "all-MiniLM-L6-v2"):
        from nfeval.models.registry import minilm_path

        path = str(minilm_path())
    else:
        path = model
    try:
        return SentenceTransformer(path, device=device)
    except Exception as e:  # hub ids offline, broken folders
        raise NfevalError(f"cannot load the embedding model {model!r} ({e}). Fix: use "
                          "'minilm-l6' (embedded) or a local sentence-transformers folder.") from e


def _encode(texts: Sequence[str], model: str, batch_size: int,
            device: str | None = None) -> np.ndarray:
    encoder = _encoder(model, device)
    if len(texts) == 0:
        return np.zeros((0, encoder.get_sentence_embedding_dimension()), dtype=np.float32)
    emb = encoder.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                         normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(emb, dtype=np.float32)


def _to_stored(emb: np.ndarray) -> dict:
    emb = np.ascontiguousarray(emb, dtype="<f4")
    return {"shape": list(emb.shape), "f32": base64.b64encode(emb.tobytes()).decode("ascii")}


def _from_stored(value: dict) -> np.ndarray:
    flat = np.frombuffer(base64.b64decode(value["f32"]), dtype="<f4")
    return flat.reshape(value["shape"]).astype(np.float32)


def embed_texts(texts: Sequence[str], model: str = "minilm-l6", batch_size: int = 32, *,
                stored: bool = False, device: str | None = None) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text (model cached per process and
    ``device``, see :func:`_encoder`).

    MiniLM reads at most 256 word pieces: longer texts are truncated (see
    :func:`nfeval_repro.debateqa.curation.chunking.embed_long_texts` for a windowed mean).

    ``stored=True``: the call's embeddings are read from / written to the active
    item store (step ``embed-batch.<embedder_key>``, exact float32), keyed by the
    whole list of texts and the batch size, not text by text: the encoder sorts a
    call's texts by length and pads each batch, so a text's last bits depend on the
    other texts of its call, and a stored call gives back exactly what that call
    computed (the encoder is not loaded when the store holds it).
    """
    from nfeval_repro.store import active_store, cached_steps

    if not stored or active_store() is None or len(texts) == 0:
        return _encode(texts, model, batch_size, device)
    spec = {"texts": [str(t) for t in texts], "batch_size": int(batch_size)}
    value = cached_steps(f"embed-batch.{embedder_key(model)}", [spec],
                         lambda specs: [_to_stored(_encode(s["texts"], model, batch_size, device))
                                        for s in specs])[0]
    emb = _from_stored(value)
    if emb.shape[0] != len(texts):
        raise NfevalError(f"the stored embeddings hold {emb.shape[0]} rows for {len(texts)} texts")
    return emb


def embedder_key(model: str = "minilm-l6") -> str:
    """A name for an embedding model's outputs in the item store: ``<name>@<checksum[:10]>``
    (the weights' SHA-256 for the embedded MiniLM; the path for a local folder). Loads
    no model."""
    from nfeval.hashing import sha256_file, sha256_text

    if model in ("minilm-l6", "minilm", "all-MiniLM-L6-v2"):
        from nfeval.models.registry import minilm_path

        return f"minilm-l6@{sha256_file(minilm_path() / 'model.safetensors')[:10]}"
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).name).strip("_") or "embedder"
    return f"{slug}@{sha256_text(str(Path(model).expanduser().resolve()))[:10]}"


class DenseIndex:
    """Cosine-similarity search over ``texts`` embedded with ``model`` on ``device``
    (``stored``: the embeddings of texts and queries go through the item store, see
    :func:`embed_texts`)."""

    def __init__(self, texts: Sequence[str], model: str = "minilm-l6", *, stored: bool = False,
                 device: str | None = None):
        self.model = model
        self.stored = stored
        self.device = device
        self.embeddings = embed_texts(texts, model, stored=stored, device=device)

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every text with ``query``."""
        if not len(self.embeddings):
            return np.zeros(0)
        q = embed_texts([query], self.model, stored=self.stored, device=self.device)[0]
        return (self.embeddings @ q).astype(float)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The k most similar (index into texts, cosine), best first, ties by index."""
        return _top_k(self.scores(query), k)


def embedder_tokenizer(model: str = "minilm-l6", device: str | None = None):
    """The (fast) tokenizer of the embedding model, for token-budget chunking."""
    return _encoder(model, device).tokenizer


def embedder_info(model: str = "minilm-l6", device: str | None = None) -> dict:
    """Name, source, checksum and dtype of an embedding model, for a :class:`Signature`."""
    if model in ("minilm-l6", "minilm", "all-MiniLM-L6-v2"):
        from nfeval.hashing import sha256_file
        from nfeval.models.registry import get_spec, minilm_path

        spec = get_spec("minilm-l6")
        return {"name": spec.name, "source": spec.source, "dtype": "float32",
                "checksum": sha256_file(minilm_path() / "model.safetensors"),
                "max_seq_length": int(_encoder(model, device).max_seq_length)}
    return {"name": model, "source": model, "dtype": "float32", "checksum": None}


# --------------------------------------------------------------------------- Table 10 filter

def trusted_documents(docs: Sequence[Document], tlds: Sequence[str] | None = None) -> list[Document]:
    """The documents whose URL lies under a trusted TLD (Table 10; see :mod:`.tld`)."""
    from nfeval_repro.debateqa.curation.tld import TRUSTED_TLDS, is_trusted

    tlds = TRUSTED_TLDS if tlds is None else tlds
    return [d for d in docs if is_trusted(d.url, tlds)]


def suffix_counts(docs: Sequence[Document], tlds: Sequence[str] | None = None):
    """Per URL suffix: ``documents`` and whether it is ``trusted`` (bad URLs as ``"(bad url)"``).

    Sorted by trusted first, then by count (descending), then by suffix.
    """
    import pandas as pd

    from nfeval_repro.debateqa.curation.tld import TRUSTED_TLDS, is_trusted, url_suffix

    tlds = TRUSTED_TLDS if tlds is None else tlds
    rows = [{"suffix": url_suffix(d.url) or "(bad url)", "trusted": is_trusted(d.url, tlds)}
            for d in docs]
    if not rows:
        return pd.DataFrame(columns=["suffix", "trusted", "documents"])
    out = (pd.DataFrame(rows).groupby(["suffix", "trusted"]).size()
           .rename("documents").reset_index())
    return out.sort_values(["trusted", "documents", "suffix"], ascending=[False, False, True],
                           kind="stable").reset_index(drop=True)


def documents_per_question(docs: Sequence[Document], question_ids: Sequence[int],
                           tlds: Sequence[str] | None = None, min_docs: int = 3,
                           max_docs: int = 5):
    """Per question: linked ``documents``, ``trusted`` ones, ``kept`` (>= ``min_docs`` trusted)
    and ``used`` (the trusted documents taken, at most ``max_docs``), as in Section 3.2:
    "We discard questions that have fewer than three documents ... each supported by 3-5
    of the most relevant documents". Documents are linked by their ``question_id``."""
    import pandas as pd

    from nfeval_repro.debateqa.curation.tld import TRUSTED_TLDS, is_trusted

    tlds = TRUSTED_TLDS if tlds is None else tlds
    if min_docs < 0 or max_docs < max(min_docs, 1):
        raise NfevalError(f"need 0 <= min_docs <= max_docs, max_docs >= 1; got {min_docs}, {max_docs}")
    total: Counter[int] = Counter()
    trusted: Counter[int] = Counter()
    for d in docs:
        if d.question_id is not None:
            total[d.question_id] += 1
            trusted[d.question_id] += is_trusted(d.url, tlds)
    rows = [{"question_id": int(q), "documents": total[q], "trusted": trusted[q],
             "kept": trusted[q] >= min_docs,
             "used": min(trusted[q], max_docs) if trusted[q] >= min_docs else 0}
            for q in question_ids]
    return pd.DataFrame(rows, columns=["question_id", "documents", "trusted", "kept", "used"])


def retrieve(questions: dict[int, str], docs: Sequence[Document], k: int = 5,
             method: str = "bm25", model: str = "minilm-l6", device: str | None = None):
    """The top ``k`` documents of ``docs`` for each question, one row per (question, rank).

    Columns: question_id, rank (from 1), doc_id, score, linked (the document
    was written for this question). ``method``: ``"bm25"`` (:class:`BM25Index`
    over title + text), ``"dense"`` (:class:`DenseIndex`), or ``"linked"``
    (only the question's own documents, ranked by BM25: a stand-in for the
    paper's search results reranked by Bge-Reranker-v2-Gemma, Appendix A.2). ``device``:
    where the dense embedder runs.
    """
    import pandas as pd

    texts = [f"{d.title}\n{d.text}" if d.title else d.text for d in docs]
    if method not in ("bm25", "dense", "linked"):
        raise NfevalError(f"unknown retrieval method {method!r}; use bm25, dense or linked")
    index = (DenseIndex(texts, model, stored=True, device=device) if method == "dense"
             else BM25Index(texts))
    rows = []
    for qid, question in questions.items():
        if method == "linked":
            own = [i for i, d in enumerate(docs) if d.question_id == qid]
            scores = index.scores(question)
            hits = sorted(((i, float(scores[i])) for i in own), key=lambda h: (-h[1], h[0]))[:k]
        else:
            hits = index.search(question, k)
        for rank, (i, score) in enumerate(hits, 1):
            rows.append({"question_id": qid, "rank": rank, "doc_id": docs[i].doc_id,
                         "score": score, "linked": docs[i].question_id == qid})
    return pd.DataFrame(rows, columns=["question_id", "rank", "doc_id", "score", "linked"])
