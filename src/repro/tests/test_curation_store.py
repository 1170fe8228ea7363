"""The curation steps that floats of another CPU could change are stored and reused.

Embeddings (per call), the dedup graph's edges and the BERTopic assignments are read
from the item store (``nfeval_repro.store``) when it holds them, so a rerun
computes nothing; the interval columns of the curation tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.curation import documents
from nfeval_repro.debateqa.curation.chunking import similarity_summary
from nfeval_repro.debateqa.curation.dedup import dedup_questions, similarity_edges, stored_similarity_edges
from nfeval_repro.debateqa.curation.pipeline import PipelineResult
from nfeval_repro.debateqa.curation.report import distribution_table
from nfeval_repro.debateqa.curation.topics import STEP, TopicSettings, fit_topics, topic_spec
from nfeval_repro.store import close_store, use_store

TEXTS = ["Should zoos exist?", "Are zoos ethical?", "Is coffee healthy?", "Does coffee harm?",
         "Should cars be banned?", "Should cities ban cars?", "Is tea good for you?"]


@pytest.fixture(autouse=True)
def _fresh_store(monkeypatch):
    monkeypatch.delenv("NFEVAL_STORE", raising=False)
    monkeypatch.delenv("NFEVAL_STORE_READ", raising=False)
    close_store()
    yield
    close_store()


class FakeFit:
    """Stands in for the BERTopic fit: two topics and an outlier, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, spec, embedder):
        self.calls += 1
        n = len(spec["questions"])
        return {"topics": [(i % 3) - 1 for i in range(n)],
                "words": {"-1": ["misc"], "0": ["zoos", "animals", "ethics"],
                          "1": ["coffee", "health", "drink"]},
                "versions": {"bertopic": "fake"}}


def test_topics_are_fitted_once_and_read_back(tmp_path):
    fit = FakeFit()
    store = use_store("t_topics", tmp_path)
    first = fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=2), fit=fit)
    assert fit.calls == 1 and store.misses == 1
    assert first.topics == [-1, 0, 1, -1, 0, 1, -1]
    assert first.label(0, 2) == "zoos, animals" and first.label(-1) == "outliers"
    # a new run (a fresh store reading the same folder): nothing is fitted
    again = use_store("t_topics", tmp_path)
    second = fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=2), fit=fit)
    assert fit.calls == 1
    assert again.hits == 1 and again.misses == 0
    assert second.topics == first.topics and second.words == first.words
    assert second.versions == {"bertopic": "fake"}
    files = list((tmp_path / "results" / "t_topics" / "items").glob(f"step.{STEP}.jsonl"))
    assert len(files) == 1 and len(files[0].read_text().splitlines()) == 1


def test_every_topic_setting_is_in_the_key(tmp_path):
    fit = FakeFit()
    use_store("t_topics", tmp_path)
    fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=2), fit=fit)
    fit_topics(TEXTS, TopicSettings(seed=1, min_cluster_size=2), fit=fit)  # another UMAP seed
    fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=3), fit=fit)  # another HDBSCAN setting
    fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=2, n_neighbors=4), fit=fit)  # UMAP
    fit_topics(TEXTS[:-1], TopicSettings(seed=0, min_cluster_size=2), fit=fit)  # other questions
    assert fit.calls == 5
    fit_topics(TEXTS, TopicSettings(seed=0, min_cluster_size=2), fit=fit)
    assert fit.calls == 5


def test_topic_spec_caps_neighbours_and_refuses_too_few_questions():
    spec = topic_spec(TEXTS, TopicSettings(n_neighbors=10, min_cluster_size=2))
    assert spec["umap"]["n_neighbors"] == len(TEXTS) - 1
    assert spec["umap"]["random_state"] == spec["seed"] == 0
    assert spec["embedder"].startswith("minilm-l6@")
    with pytest.raises(NfevalError, match="too few"):
        topic_spec(TEXTS[:3], TopicSettings(min_cluster_size=2))


def test_without_a_store_topics_are_fitted_every_time():
    fit = FakeFit()
    fit_topics(TEXTS, TopicSettings(min_cluster_size=2), fit=fit)
    fit_topics(TEXTS, TopicSettings(min_cluster_size=2), fit=fit)
    assert fit.calls == 2


def _fake_encoder(calls):
    def encode(texts, model, batch_size, device=None):
        calls.append(list(texts))
        rng = np.random.default_rng(len(calls))
        emb = rng.normal(size=(len(texts), 8)).astype(np.float32)
        return emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return encode


def test_stored_embeddings_are_exact_and_computed_once_per_call(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(documents, "_encode", _fake_encoder(calls))
    use_store("t_embed", tmp_path)
    texts = TEXTS[:4] + TEXTS[:1]
    first = documents.embed_texts(texts, stored=True)
    assert calls == [texts]  # one call, as the encoder would have been called
    assert first.dtype == np.float32 and first.shape == (5, 8)
    use_store("t_embed", tmp_path)
    second = documents.embed_texts(texts, stored=True)
    assert len(calls) == 1 and np.array_equal(second, first)  # bit for bit
    # another list of texts is another call: a text's last bits depend on its batch
    documents.embed_texts(TEXTS[:4], stored=True)
    documents.embed_texts(texts, stored=True, batch_size=2)
    assert calls[1:] == [TEXTS[:4], texts]
    documents.embed_texts(texts)  # stored=False: always computed
    assert len(calls) == 4
    files = list((tmp_path / "results" / "t_embed" / "items").glob("step.embed-batch.*.jsonl"))
    assert len(files) == 1 and len(files[0].read_text().splitlines()) == 3


def test_dedup_edges_are_stored_decisions(tmp_path):
    emb = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32)
    use_store("t_dedup", tmp_path)
    assert stored_similarity_edges(emb, 0.75) == similarity_edges(emb, 0.75)
    path = tmp_path / "results" / "t_dedup" / "items" / "step.dedup-edges.jsonl"
    assert len(path.read_text().splitlines()) == 1
    # A committed decision wins over a recomputation: rewrite the stored edge list
    # (as another CPU might have put a cosine on the other side of the threshold).
    path.write_text(path.read_text().replace("[[0,1,", "[[0,2,"))
    use_store("t_dedup", tmp_path)
    assert [e[:2] for e in stored_similarity_edges(emb, 0.75)] == [(0, 2)]
    qs = [("s", str(i), t) for i, t in enumerate(TEXTS[:3])]
    res = dedup_questions(qs, embeddings=emb, threshold=0.75)
    assert [e[:2] for e in res.edges] == [(0, 2)]
    assert len(path.read_text().splitlines()) == 1  # nothing new was computed
    # another threshold is another decision
    assert stored_similarity_edges(emb, 0.9) == []
    assert len(path.read_text().splitlines()) == 2


def test_dedup_without_a_store_computes():
    emb = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32)
    qs = [("s", str(i), t) for i, t in enumerate(TEXTS[:3])]
    assert [e[:2] for e in dedup_questions(qs, embeddings=emb, threshold=0.75).edges] == [(0, 1)]


def test_similarity_summary_intervals_on_the_means_only():
    frame = pd.DataFrame({"mode": "truncate", "question_id": [1, 1, 2, 3, 3, 3],
                          "cosine": [0.5, 0.7, 0.4, 0.6, 0.65, 0.7]})
    s = similarity_summary(frame, seed=0).set_index(["level", "statistic"])
    q_mean, c_mean = s.loc[("question", "mean")], s.loc[("chunk", "mean")]
    assert q_mean.ours == pytest.approx(np.mean([0.6, 0.4, 0.65]))
    assert q_mean.ci_low <= q_mean.ours <= q_mean.ci_high
    assert c_mean.ours == pytest.approx(np.mean(frame.cosine))
    assert c_mean.ci_low <= c_mean.ours <= c_mean.ci_high
    assert (s["n_questions"] == 3).all()
    others = s.drop([("question", "mean"), ("chunk", "mean")])
    assert others[["ci_low", "ci_high"]].isna().all().all()
    again = similarity_summary(frame, seed=0)
    assert again.equals(similarity_summary(frame, seed=0))


def test_distribution_table_intervals_on_means_and_exact_counts():
    questions = pd.DataFrame({
        "source": "s", "question_id": ["1", "2", "3", "4"], "question": "q",
        "retrieved": 5, "retrieved_linked": 5, "trusted": [2, 3, 4, 5], "used": [0, 3, 4, 5],
        "povs_parsed": [np.nan, 3, 1, 4], "povs": [np.nan, 3, 1, 4],
        "partial_answers": [np.nan, 3, np.nan, 4], "dropped_at": ["documents", "", "povs", ""]})
    items = [{"id": 2, "question": "q", "partial_answers": [{}] * 3},
             {"id": 4, "question": "q", "partial_answers": [{}] * 4}]
    res = PipelineResult(funnel=pd.DataFrame(), questions=questions, hits=pd.DataFrame(),
                         povs=pd.DataFrame(), partial_answers=pd.DataFrame(), items=items,
                         raw={}, parameters={"min_docs": 3, "seed": 0})
    ref = ("reference", pd.DataFrame({"id": [1, 2, 3], "partial_answers": [3, 4, 4]}))
    t = distribution_table(res, ref)
    assert list(t.columns) == ["figure", "metric", "n", "ours", "ci_low", "ci_high",
                               "n_questions", "data"]
    means = t[t.metric.str.startswith("mean ")].set_index(["figure", "metric"])
    assert means.loc[("f12", "mean documents per question"), "ours"] == 4.0
    assert means.loc[("f12", "mean documents per question"), "n_questions"] == 3
    assert means.loc[("f13", "mean POVs per question"), "ours"] == pytest.approx(8 / 3)
    assert means.loc[("f13", "mean partial answers per item"), "ours"] == 3.5
    assert means.loc[("f13 reference", "mean partial answers per item"), "n_questions"] == 3
    assert (means.ci_low <= means.ours).all() and (means.ours <= means.ci_high).all()
    counts = t[~t.metric.str.startswith("mean ")]
    assert counts[["ci_low", "ci_high"]].isna().all().all()
    hist = counts[counts.metric == "questions with n trusted documents"]
    assert list(hist.ours) == [0, 0, 1, 1, 1, 1] and (hist.n_questions == 4).all()
