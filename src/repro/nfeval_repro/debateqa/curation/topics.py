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

__all__ = ["STEP", "TopicResult", "TopicSettings", "fit_topics", "topic_spec"]

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


@dataclass(frozen=True)
class TopicSettings:
    """Every setting that decides the topics besides the questions (all part of the stored
    step's key, :func:`topic_spec`)."""

    #: sentence embedder of the questions: the embedded MiniLM or a local model folder
    embedder: str = "minilm-l6"
    #: UMAP neighbours (BERTopic's default 15 is for large corpora); capped at the number
    #: of questions less one, since UMAP needs fewer neighbours than points
    n_neighbors: int = 10
    #: UMAP dimensions (BERTopic's default)
    n_components: int = 5
    #: UMAP minimum distance (BERTopic's default)
    min_dist: float = 0.0
    #: UMAP metric (BERTopic's default)
    umap_metric: str = "cosine"
    #: smallest HDBSCAN topic (BERTopic's default 10); at least twice as many questions needed
    min_cluster_size: int = 3
    #: HDBSCAN metric (BERTopic's default)
    hdbscan_metric: str = "euclidean"
    #: HDBSCAN cluster selection (BERTopic's default)
    cluster_selection_method: str = "eom"
    #: stop words of the c-TF-IDF vectorizer
    stop_words: str = "english"
    #: words kept per topic
    top_n_words: int = 10
    #: random seed: UMAP's ``random_state``
    seed: int = 0


def topic_spec(texts: Sequence[str], settings: TopicSettings = TopicSettings()
               ) -> dict[str, Any]:
    """Everything that decides the topics of ``texts`` under ``settings``, as the store
    key's input; ``n_neighbors`` is capped at ``len(texts) - 1``, and the cap is what the
    key records.
    """
    from nfeval_repro.debateqa.curation.documents import embedder_key

    texts = [str(t) for t in texts]
    st = settings
    if len(texts) < 2 * st.min_cluster_size:
        raise NfevalError(f"{len(texts)} questions are too few for topics of at least "
                          f"{st.min_cluster_size}; give more questions or lower "
                          "min_cluster_size.")
    return {"questions": texts, "embedder": embedder_key(st.embedder),
            "umap": {"n_neighbors": int(min(st.n_neighbors, len(texts) - 1)),
                     "n_components": int(st.n_components), "min_dist": float(st.min_dist),
                     "metric": st.umap_metric, "random_state": int(st.seed)},
            "hdbscan": {"min_cluster_size": int(st.min_cluster_size),
                        "metric": st.hdbscan_metric,
                        "cluster_selection_method": st.cluster_selection_method},
            "vectorizer": {"stop_words": st.stop_words}, "top_n_words": int(st.top_n_words),
            "seed": int(st.seed)}


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


def fit_topics(texts: Sequence[str], settings: TopicSettings = TopicSettings(), *,
               fit: Callable[[dict[str, Any], str], dict[str, Any]] | None = None,
               device: str | None = None) -> TopicResult:
    """BERTopic's topic of every text under ``settings``, from the active item store where
    it holds them.

    ``fit(spec, embedder)`` replaces the BERTopic fit (tests). ``device``: where the
    embedder runs (not part of the key). Without an active store every call fits.
    """
    from nfeval_repro.store import cached_steps

    spec = topic_spec(texts, settings)
    fitter = fit or partial(_fit_bertopic, device=device)
    value = cached_steps(STEP, [spec],
                         lambda specs: [fitter(s, settings.embedder) for s in specs])[0]
    topics = [int(t) for t in value["topics"]]
    if len(topics) != len(spec["questions"]):
        raise NfevalError(f"the stored topics hold {len(topics)} assignments for "
                          f"{len(spec['questions'])} questions")
    return TopicResult(topics=topics,
                       words={int(k): list(v) for k, v in value["words"].items()},
                       spec=spec, versions=dict(value.get("versions", {})))
