"""Topics of a question set with BERTopic (DebateQA Figure 14), stored once fitted.

DebateQA models the domain distribution of its questions with BERTopic
(Grootendorst, 2022). BERTopic embeds the questions (here the embedded
all-MiniLM-L6-v2), reduces the embeddings with UMAP, clusters them with
HDBSCAN and labels each cluster by its top c-TF-IDF words.

UMAP's layout and HDBSCAN's clusters are not stable under float
differences of the last bit: on another CPU (another SIMD kernel, native
bf16) the same questions and seed gave 6 topic rows instead of 10. So the
fitted result -- each question's topic and each topic's top words -- is a
stored step (:func:`nfeval_repro.store.cached_steps`, step ``bertopic-topics``)
keyed by the questions and every setting that decides the topics (embedder,
UMAP and HDBSCAN settings, vectorizer, seed): a rerun with an item store
reads the committed assignments instead of refitting, and refits only when
one of them changes. The embeddings go through the store too
(:func:`nfeval_repro.debateqa.curation.documents.embed_texts` with ``stored=True``).
Library versions are recorded with the result, not in the key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from nfeval.errors import NfevalError

__all__ = ["STEP", "TopicResult", "fit_topics", "topic_spec"]

STEP = "bertopic-topics"


@dataclass
class TopicResult:
    """Each question's topic (-1: HDBSCAN's outliers) and each topic's top words."""

    topics: list[int]
    words: dict[int, list[str]]
    spec: dict[str, Any]
    versions: dict[str, str] = field(default_factory=dict)

    def label(self, topic: int, n_words: int = 3) -> str:
        """``"outliers"`` for -1, else the topic's first ``n_words`` words joined by commas."""
        if topic == -1:
            return "outliers"
        return ", ".join(self.words.get(int(topic), [])[:n_words])


def topic_spec(texts: Sequence[str], *, embedder: str = "minilm-l6", n_neighbors: int = 10,
               n_components: int = 5, min_dist: float = 0.0, umap_metric: str = "cosine",
               min_cluster_size: int = 3, hdbscan_metric: str = "euclidean",
               cluster_selection_method: str = "eom", stop_words: str = "english",
               top_n_words: int = 10, seed: int = 0) -> dict[str, Any]:
    """Everything that decides the topics, as the store key's input.

    ``n_neighbors`` is capped at ``len(texts) - 1`` (UMAP needs fewer neighbours
    than points), and the cap is what the key records.
    """
    from nfeval_repro.debateqa.curation.documents import embedder_key

    texts = [str(t) for t in texts]
    if len(texts) < 2 * min_cluster_size:
        raise NfevalError(f"{len(texts)} questions are too few for topics of at least "
                          f"{min_cluster_size}; give more questions or lower min_cluster_size.")
    return {"questions": texts, "embedder": embedder_key(embedder),
            "umap": {"n_neighbors": int(min(n_neighbors, len(texts) - 1)),
                     "n_components": int(n_components), "min_dist": float(min_dist),
                     "metric": umap_metric, "random_state": int(seed)},
            "hdbscan": {"min_cluster_size": int(min_cluster_size), "metric": hdbscan_metric,
                        "cluster_selection_method": cluster_selection_method},
            "vectorizer": {"stop_words": stop_words}, "top_n_words": int(top_n_words),
            "seed": int(seed)}


def _fit_bertopic(spec: dict[str, Any], embedder: str, device: str | None = None
                  ) -> dict[str, Any]:
    """Fit BERTopic as ``spec`` says, embedding on ``device``; the JSON value the store
    keeps."""
    import bertopic
    import hdbscan
    import umap
    from bertopic import BERTopic
    from hdbscan import HDBSCAN
    from sklearn.feature_extraction.text import CountVectorizer
    from umap import UMAP

    from nfeval_repro.debateqa.curation.documents import _encoder, embed_texts

    texts = spec["questions"]
    embeddings = embed_texts(texts, embedder, stored=True, device=device)
    u, h = spec["umap"], spec["hdbscan"]
    model = BERTopic(
        embedding_model=_encoder(embedder, device),
        umap_model=UMAP(n_neighbors=u["n_neighbors"], n_components=u["n_components"],
                        min_dist=u["min_dist"], metric=u["metric"],
                        random_state=u["random_state"]),
        hdbscan_model=HDBSCAN(min_cluster_size=h["min_cluster_size"], metric=h["metric"],
                              cluster_selection_method=h["cluster_selection_method"],
                              prediction_data=True),
        vectorizer_model=CountVectorizer(stop_words=spec["vectorizer"]["stop_words"]),
        top_n_words=spec["top_n_words"])
    topics, _ = model.fit_transform(texts, embeddings=embeddings)
    words = {str(int(t)): [w for w, _ in (model.get_topic(int(t)) or [])]
             for t in sorted(set(int(x) for x in topics))}
    return {"topics": [int(t) for t in topics], "words": words,
            "versions": {"bertopic": bertopic.__version__, "umap": umap.__version__,
                         "hdbscan": getattr(hdbscan, "__version__", "unknown")}}


def fit_topics(texts: Sequence[str], *, embedder: str = "minilm-l6", seed: int = 0,
               fit: Callable[[dict[str, Any], str], dict[str, Any]] | None = None,
               device: str | None = None, **settings: Any) -> TopicResult:
    """BERTopic's topic of every text, from the active item store where it holds them.

    ``settings`` are :func:`topic_spec`'s (``n_neighbors``, ``n_components``,
    ``min_dist``, ``min_cluster_size``, ``top_n_words``...). ``fit(spec,
    embedder)`` replaces the BERTopic fit (tests). ``device``: where the embedder runs
    (not part of the key). Without an active store every call fits.
    """
    from nfeval_repro.store import cached_steps

    spec = topic_spec(texts, embedder=embedder, seed=seed, **settings)
    fitter = fit or partial(_fit_bertopic, device=device)
    value = cached_steps(STEP, [spec], lambda specs: [fitter(s, embedder) for s in specs])[0]
    topics = [int(t) for t in value["topics"]]
    if len(topics) != len(spec["questions"]):
        raise NfevalError(f"the stored topics hold {len(topics)} assignments for "
                          f"{len(spec['questions'])} questions")
    return TopicResult(topics=topics,
                       words={int(k): list(v) for k, v in value["words"].items()},
                       spec=spec, versions=dict(value.get("versions", {})))
