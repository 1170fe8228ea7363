"""dq_f14 -- DebateQA Figure 14: topic distribution of the questions (BERTopic).

BERTopic (:mod:`nfeval_repro.debateqa.curation.topics`) over the questions of the
DebateQA splits where they are reachable (test, then dev), else over the project's own
sample; each topic's count and share of the questions, the share with a 95% Wilson
interval over questions. The fitted topics are read from the item store where it holds
them (UMAP and HDBSCAN are not stable under last-bit float differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import textwrap
import time

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

EMBEDDER = "minilm-l6"


def _questions(limit: int, progress: bool) -> tuple[list, str]:
    """The first ``limit`` questions (0: all) of each reachable split, else of the sample,
    and the source's name (an unreachable split is said when ``progress``)."""
    from nfeval.data import load_debateqa
    from nfeval_repro.debateqa.systems import load_questions

    items, source = [], ""
    for name in ("test", "dev"):
        try:
            got = sorted(load_debateqa(name), key=lambda it: it.id)
        except NfevalError as exc:
            if progress:
                print(f"DebateQA {name} split not reachable: "
                      f"{textwrap.shorten(str(exc), 200)}")
            continue
        items += got[:limit] if limit else got
        source += ("+" if source else "") + f"DebateQA {name}"
    if not items:
        items = load_questions("sample", limit)
        source = "project sample (not DebateQA)"
    return items, source


def _signature(fitted, seed: int, n: int, min_cluster_size: int) -> Signature:
    from nfeval.data import sha256_file
    from nfeval.models.registry import get_spec, minilm_path

    version = fitted.versions.get("bertopic")
    if version is None:
        import bertopic

        version = bertopic.__version__
    return Signature(metric="bertopic_topics", variant="umap+hdbscan+ctfidf",
                     model={"name": "minilm-l6 (all-MiniLM-L6-v2)",
                            "source": get_spec(EMBEDDER).source,
                            "checksum": sha256_file(minilm_path() / "model.safetensors")},
                     seed=seed, n=n,
                     extra={"n_neighbors": fitted.spec["umap"]["n_neighbors"],
                            "min_cluster_size": min_cluster_size, "bertopic": version})


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f14_topics.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed of UMAP (part of the stored topics' key)
    seed: int = 0
    #: questions (the first by id of each split), 0 for all
    limit: int = 0
    #: UMAP neighbours (BERTopic default 15, for large corpora)
    n_neighbors: int = 10
    #: UMAP dimensions (BERTopic default)
    n_components: int = 5
    #: smallest HDBSCAN topic (BERTopic default 10)
    min_cluster_size: int = 3
    #: keywords in a topic label
    label_words: int = 3


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Topics of the first ``limit`` questions of each split (0: all); UMAP's
    ``random_state`` is ``seed``. The embedder runs on the profile's device.

    ``frames``: ``assignments`` (each question's topic and label); ``extra``:
    ``source``, ``labels`` (topic: label) and ``n_questions``. ``progress``: print what
    was read and how long the topics took.
    """
    from nfeval_repro.debateqa.curation.topics import TopicSettings, fit_topics
    from nfeval.metrics.intervals import proportion_interval
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.store import active_store

    device = get_profile(config.profile).device
    items, source = _questions(config.limit, progress)
    texts = [it.question for it in items]
    if progress:
        print(f"{len(texts)} questions from the {source}")
    started = time.time()
    settings = TopicSettings(embedder=EMBEDDER, n_neighbors=config.n_neighbors,
                             n_components=config.n_components, min_dist=0.0,
                             min_cluster_size=config.min_cluster_size, top_n_words=10,
                             seed=config.seed)
    fitted = fit_topics(texts, settings, device=device)
    labels = {t: fitted.label(t, config.label_words) for t in sorted(set(fitted.topics))}
    store = active_store()
    if progress:
        print(f"topics in {time.time() - started:.0f} s "
              f"({store.summary() if store else 'no item store'}): "
              f"{len(labels) - (-1 in labels)} topics")
    assign = pd.DataFrame({"id": [it.id for it in items], "question": texts,
                           "topic": fitted.topics})
    assign["label"] = assign["topic"].map(labels)

    counts = assign.groupby("topic").size()
    table = pd.DataFrame({"topic": counts.index, "label": [labels[t] for t in counts.index],
                          "quantity": "questions", "ours": counts.to_numpy()})
    shares = [proportion_interval(int(c), len(texts)) for c in counts]
    table = pd.concat([table.assign(ci_low=np.nan, ci_high=np.nan),
                       table.assign(quantity="share", ours=table["ours"] / len(texts),
                                    ci_low=[s.low for s in shares],
                                    ci_high=[s.high for s in shares])],
                      ignore_index=True).assign(n_questions=len(texts), source=source)
    return Experiment(
        id="dq_f14", table=table, id_columns=["topic", "label", "quantity"],
        interval="questions",
        signatures=[_signature(fitted, config.seed, len(texts), config.min_cluster_size)],
        parameters={"source": source},
        notes=f"BERTopic over the questions of the {source}, MiniLM embeddings; topics "
              "read from the item store where it holds them. Share rows: Wilson 95% "
              "intervals over questions; question rows: exact counts.",
        frames={"assignments": assign},
        extra={"source": source, "labels": labels, "n_questions": len(texts)})
