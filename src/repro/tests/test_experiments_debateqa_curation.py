"""The curation artefacts' experiment functions (dq_t01, dq_t08_t09, dq_t10, dq_f01, dq_f11,
dq_f12_f13, dq_f14) on tiny inputs.

The sentence encoder is replaced by a fake whose vectors are chosen per text, so the
cosines (and what deduplication removes) are hand-checkable; the LLM of the pipeline is a
fake with canned POV lists, and the BERTopic fit a fake with fixed topics. Only the
embedder's tokenizer (dq_f11) and its signature read the embedded MiniLM.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.data.sample import load_sample
from nfeval_repro.debateqa import (
    dq_f01,
    dq_f11,
    dq_f12_f13,
    dq_f14,
    dq_t01,
    dq_t08_t09,
    dq_t10,
)
from nfeval_repro.debateqa.curation import documents, topics
from nfeval.models.base import Generation, ModelInfo
from nfeval_repro.profiles import Profile
from nfeval_repro.store import close_store

SAMPLE = load_sample()
FIRST = sorted(SAMPLE.items)[:3]  # 9001 (voting), 9002 (meat), 9003 (organ donation)


@pytest.fixture(autouse=True)
def _no_store(monkeypatch, tmp_path):
    for name in ("NFEVAL_STORE", "NFEVAL_STORE_READ", "NFEVAL_DEVICE", "NFEVAL_DTYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    close_store()
    yield
    close_store()


class FakeEncoder:
    """Unit vectors by topic word (voting, meat, else a third axis); records each device."""

    AXES = ("voting", "meat")

    def __init__(self, vectors: dict[str, list[float]] | None = None):
        self.vectors = vectors or {}
        self.devices: list = []

    def __call__(self, texts, model, batch_size, device=None):
        self.devices.append(device)
        rows = []
        for t in texts:
            if t in self.vectors:
                rows.append(self.vectors[t])
                continue
            k = next((i for i, w in enumerate(self.AXES) if w in t.lower()), len(self.AXES))
            rows.append([float(i == k) for i in range(len(self.AXES) + 1)])
        return np.asarray(rows, dtype=np.float32)


def _collection(path, docs: list[tuple[int | None, str, str]]):
    """A collection file of (question_id, url, text) documents."""
    path.write_text("".join(json.dumps({"id": f"d{i}", "question_id": q, "url": u, "text": t})
                            + "\n" for i, (q, u, t) in enumerate(docs)), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- dq_t01

def test_t01_prints_drawn_entries_with_cut_explanations():
    exp = dq_t01.run(dq_t01.Config(split="no-such-split", limit=2, explanation_chars=60),
                     progress=False)
    assert exp.id == "dq_t01" and exp.id_columns == ["question_id", "pov_index", "field"]
    assert exp.interval.startswith("none: ")
    t = exp.table
    assert (t.source == "project sample (not DebateQA)").all()
    chosen = exp.extra["chosen"]
    assert len(chosen) == 2 and sorted(t.question_id.unique()) == [it.id for it in chosen]
    for it in chosen:
        rows = t[t.question_id == it.id]
        assert list(rows.field[:1]) == ["question"]
        assert (rows.field == "point_of_view").sum() == len(it.partial_answers)
    expl = t[t.field == "explanation"]
    assert (expl.ours.str.len() <= 60).all() and (expl.chars > 60).all()
    assert exp.signatures[0].n == 2 and exp.signatures[0].seed == 0


def test_t01_question_id_names_one_entry_or_fails():
    exp = dq_t01.run(dq_t01.Config(split="no-such-split", question_id=FIRST[1]), progress=False)
    assert set(exp.table.question_id) == {FIRST[1]}
    with pytest.raises(NfevalError, match="is not in the project sample"):
        dq_t01.run(dq_t01.Config(split="no-such-split", question_id=1), progress=False)


# --------------------------------------------------------------------------- dq_t10

def test_t10_counts_on_a_tiny_collection(tmp_path):
    q1, q2 = FIRST[:2]
    docs = _collection(tmp_path / "docs.jsonl", [
        (q1, "https://a.gov/1", "one"), (q1, "https://b.ac.uk/2", "two"),
        (q1, "https://c.org/3", "three"), (q1, "https://d.com/4", "four"),
        (q2, "https://e.info/5", "five"), (q2, "https://f.blog/6", "six"),
        (None, "https://g.edu/7", "distractor"), (FIRST[2], "https://h.gov/8", "not drawn")])
    exp = dq_t10.run(dq_t10.Config(limit=2, documents=str(docs)), progress=False)
    assert exp.id == "dq_t10" and exp.interval.startswith("none: ")
    assert exp.parameters == {"documents": str(docs)}
    t = exp.table.set_index(["section", "item"])["ours"]
    assert t[("filter", "documents")] == 7  # the third question's page is not drawn
    assert t[("filter", "documents_trusted")] == 5 and t[("filter", "documents_dropped")] == 2
    assert t[("filter", "questions_kept")] == 1 and t[("filter", "questions_dropped")] == 1
    assert t[("filter", "docs_per_kept_question_min")] == 3
    assert t[("table10", "gov")] == 1 and t[("table10", "edu")] == 2  # ac.uk counts as edu
    assert t[("suffix", "com")] == 1
    per_q = exp.frames["documents_per_question"]
    assert list(per_q.question_id) == [q1, q2] and list(per_q.trusted) == [3, 1]


# --------------------------------------------------------------------------- dq_t08_t09

def test_t08_t09_dedup_and_sweep_with_chosen_vectors(monkeypatch):
    sample = [SAMPLE.items[q].question for q in sorted(SAMPLE.items)[:5]]
    fake = FakeEncoder({sample[0]: [1, 0, 0, 0], sample[1]: [1, 0, 0, 0],
                        sample[2]: [0, 1, 0, 0], sample[3]: [0, 0, 1, 0],
                        sample[4]: [0, 0.8, 0.6, 0]})
    monkeypatch.setattr(documents, "_encode", fake)
    exp = dq_t08_t09.run(dq_t08_t09.Config(sources="debateqa-sample", limit=5, threshold=0.85,
                                           sweep="0.75,0.85"), progress=False)
    assert fake.devices == ["cpu"]  # the embedded profile's device reaches the encoder
    assert exp.id == "dq_t08_t09" and exp.id_columns == ["source", "stage"]
    t = exp.table.set_index(["source", "stage"])["ours"]
    assert t[("debateqa-sample", "before")] == 5 and t[("debateqa-sample", "removed")] == 1
    assert t[("__all__", "after")] == 4
    assert (exp.table.n_questions == 5).all() and (exp.table.threshold == 0.85).all()
    assert exp.signatures[0].extra["edges"] == 1
    sweep = exp.frames["threshold_sweep"].set_index("threshold")["removed"]
    assert sweep.to_dict() == {0.75: 2, 0.85: 1}  # 0.8 reaches 0.75 only
    assert len(exp.frames["duplicate_pairs"]) == 1
    assert set(exp.frames) == {"duplicate_pairs", "threshold_sweep", "paper_sources"}


# --------------------------------------------------------------------------- dq_f11

def test_f11_cosines_of_own_and_other_documents(tmp_path, monkeypatch):
    q1, q2 = FIRST[:2]
    docs = _collection(tmp_path / "docs.jsonl", [
        *[(q1, f"https://v{i}.gov/", f"Voting page {i} on compulsory voting.") for i in range(3)],
        *[(q2, f"https://m{i}.edu/", f"Meat page {i} on eating meat.") for i in range(3)],
        (q2, "https://m.com/", "Meat shop.")])
    fake = FakeEncoder()
    monkeypatch.setattr(documents, "_encode", fake)
    exp = dq_f11.run(dq_f11.Config(limit=3, documents=str(docs)), progress=False)
    assert set(fake.devices) == {"cpu"}
    assert exp.id == "dq_f11" and exp.interval == "questions"
    t = exp.table.set_index(["mode", "level", "statistic"])
    for mode in ("truncate", "window-mean"):
        assert t.loc[(mode, "question", "mean"), "ours"] == pytest.approx(1.0)
        assert t.loc[(mode, "question", "n"), "ours"] == 2
    assert t.loc[(dq_f11.BASELINE_MODE, "question", "mean"), "ours"] == pytest.approx(0.0)
    assert t["n_questions"].eq(2).all()
    assert len(exp.frames["retrieved"]) == 6  # the .com page is not trusted
    assert exp.parameters == {"documents": str(docs)}


# --------------------------------------------------------------------------- dq_f14

def test_f14_shares_of_fixed_topics(monkeypatch):
    seen = []

    def fake_fit(spec, embedder, device=None):
        seen.append(device)
        n = len(spec["questions"])
        return {"topics": [(i % 3) - 1 for i in range(n)],
                "words": {"-1": ["misc"], "0": ["vote", "law"], "1": ["meat", "food"]},
                "versions": {"bertopic": "fake"}}

    monkeypatch.setattr(topics, "_fit_bertopic", fake_fit)
    exp = dq_f14.run(dq_f14.Config(limit=12, min_cluster_size=2, label_words=1), progress=False)
    assert seen == ["cpu"]
    n = exp.extra["n_questions"]
    assert exp.id == "dq_f14" and exp.interval == "questions" and n % 12 == 0
    t = exp.table.set_index(["quantity", "topic"])
    assert [t.loc[("questions", k), "ours"] for k in (-1, 0, 1)] == [n / 3] * 3
    assert t.loc[("questions", 0), "label"] == "vote" and t.loc[("share", -1), "label"] == "outliers"
    shares = exp.table[exp.table.quantity == "share"]
    assert shares.ours.sum() == pytest.approx(1.0)
    assert ((shares.ci_low < shares.ours) & (shares.ours < shares.ci_high)).all()
    assert exp.table.loc[exp.table.quantity == "questions", ["ci_low", "ci_high"]].isna().all().all()
    assert exp.parameters == {"source": exp.extra["source"]}
    assert exp.signatures[0].extra["bertopic"] == "fake"


# --------------------------------------------------------------------------- dq_f01, dq_f12_f13

class FakeLLM:
    """Three POVs for any question, explanations that echo their POV."""

    info = ModelInfo(name="fake-llm", backend="fake", source="test", checksum="0")

    def chat_prompt(self, user: str, *, system: str | None = None) -> str:
        return user

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        if "Point of view:" in prompt:
            pov = prompt.split("Point of view:")[1].split("\n")[0].strip()
            return Generation(text=f"The documents argue that {pov.lower()}", n_tokens=9)
        return Generation(text="1. Compulsion raises turnout [docs: 1]\n"
                               "2. Compulsion curbs individual liberty [docs: 2]\n"
                               "3. Campaigns must reach every voter [docs: 3]", n_tokens=20)


@pytest.fixture
def fake_llm(monkeypatch):
    loads = []

    def load(self, name, backend="hf", **kwargs):
        loads.append((self.name, name, backend))
        return FakeLLM()

    monkeypatch.setattr(Profile, "load", load)
    monkeypatch.setattr(documents, "_encode", FakeEncoder())
    return loads


def test_f01_funnel_with_a_fake_llm(fake_llm):
    exp = dq_f01.run(dq_f01.Config(limit=1, model=""), progress=False)
    assert fake_llm == [("embedded", "qwen2.5-coder-1.5b-instruct", "llama")]  # the judge
    assert exp.id == "dq_f01" and exp.parameters == {"model": "fake-llm"}
    assert exp.interval.startswith("none: ")
    t = exp.table.set_index(["step", "measure"])["ours"]
    assert t[("sourced", "questions")] == len(SAMPLE.items)
    assert t[("limit", "questions")] == 1
    assert t[("min_povs", "povs")] == 3 and t[("explanations", "povs")] == 3
    assert "paper" in exp.table.columns
    assert set(exp.frames) == {"questions", "hits", "povs", "partial_answers"}
    assert len(exp.extra["result"].items) == 1
    compare = exp.extra["search_comparison"]
    assert set(compare["search"]) == set(dq_f01.COMPARED_SEARCHES)
    assert exp.extra["linked_share"]["linked"] == 1.0


def test_f12_f13_distributions_with_a_fake_llm(fake_llm):
    exp = dq_f12_f13.run(dq_f12_f13.Config(limit=1, model="named-model",
                                           reference_split="no-such-split"), progress=False)
    assert fake_llm == [("embedded", "named-model", "llama")]
    assert exp.id == "dq_f12_f13" and exp.interval == "questions"
    assert exp.id_columns == ["figure", "metric", "n"]
    t = exp.table
    means = t[t.metric.str.startswith("mean ")].set_index(["figure", "metric"])
    assert means.loc[("f13", "mean POVs per question"), "ours"] == 3
    assert means.loc[("f13", "mean partial answers per item"), "n_questions"] == 1
    counts = t[~t.metric.str.startswith("mean ")]
    assert counts[["ci_low", "ci_high"]].isna().all().all()
    assert exp.extra["reference"][0].startswith("project sample")
    assert isinstance(exp.extra["reference"][1], pd.DataFrame)
