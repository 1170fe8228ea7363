"""RAG retrieval, the ReAct loop and its parser, prompt assembly
(nfeval_repro.debateqa.rag, .rag_index, .rag_react).

Model-free: a bag-of-words "embedder" over a fixed vocabulary stands in for
MiniLM, and a fake language model returns canned text, so every expected
result can be checked by hand.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.curation.documents import Document
from nfeval.data import DebateItem, PartialAnswer
from nfeval.models.base import Generation, ModelInfo
from nfeval_repro.debateqa.rag import (NO_DOCUMENTS, RagSettings, format_chunks, rag_answers,
                                       rag_user_prompt)
from nfeval_repro.debateqa.rag_index import Chunk, ChunkIndex, Retrieved, chunk_documents
from nfeval_repro.debateqa.rag_react import (parse_react_step, react_gather,
                                                   react_step_prompt, react_user_prompt)

VOCAB = ["vote", "voting", "mandatory", "nuclear", "energy", "reactor", "school", "uniform",
         "tax", "meat", "animal", "zoo"]


def bow_embed(texts):
    """Counts of the vocabulary words (plus one constant dimension), L2-normalised."""
    rows = []
    for t in texts:
        words = re.findall(r"\w+", t.lower())
        v = np.array([words.count(w) for w in VOCAB] + [0.1], dtype=np.float32)
        rows.append(v / np.linalg.norm(v))
    return np.stack(rows)


DOCS = [
    Document("d1", "https://www.elections.gov/vote", "Mandatory voting raises turnout. "
             "Voting is a civic duty in some countries.", 1, "Voting"),
    Document("d2", "https://blog.example.com/vote", "Mandatory vote laws are bad. "
             "Forcing people to vote is wrong.", 1, "Vote blog"),
    Document("d3", "https://energy.mit.edu/nuclear", "Nuclear energy is low carbon. "
             "A reactor runs all day.", 2, "Nuclear"),
    Document("d4", "https://nuclear-news.com/a", "Nuclear reactor accidents are costly. "
             "Nuclear waste lasts.", 2),
    Document("d5", "https://schools.org/uniform", "A school uniform lowers peer pressure.", 3),
    Document("d6", "https://zoo-fans.net/x", "The zoo keeps each animal safe. Animal care.", None),
]


@pytest.fixture
def index():
    return ChunkIndex(DOCS, embed=bow_embed, k_docs=0)


# --------------------------------------------------------------------------- chunks and search

def test_chunk_documents_marks_trust_and_keeps_text():
    long = Document("L", "https://x.gov.uk/p", "\n\n".join(["word " * 100] * 5), None)
    chunks = chunk_documents(DOCS + [long], max_chars=600)
    by_doc = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    assert [c.id for c in by_doc["L"]] == [f"L#{k}" for k in range(len(by_doc["L"]))]
    assert len(by_doc["L"]) > 1 and all(len(c.text) <= 600 for c in by_doc["L"])
    assert " ".join(c.text for c in by_doc["L"]).split() == long.text.split()
    trusted = {c.doc_id: c.trusted for c in chunks}
    assert trusted == {"d1": True, "d2": False, "d3": True, "d4": False, "d5": True,
                       "d6": False, "L": True}


def test_duplicate_document_ids_are_an_error():
    with pytest.raises(NfevalError, match="twice"):
        chunk_documents([DOCS[0], DOCS[0]])


@pytest.mark.parametrize("query, best", [
    ("nuclear reactor", "d4#0"),  # d4 says nuclear twice and reactor once
    ("school uniform", "d5#0"),
    ("zoo animal", "d6#0"),
    ("is voting a duty", "d1#0"),
])
def test_search_returns_the_right_chunk(index, query, best):
    hits = index.search(query, 3)
    assert hits[0].chunk.id == best
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_k_exclude_and_empty(index):
    assert len(index.search("nuclear", 10)) == len(DOCS)  # k larger than the collection
    assert index.search("nuclear", 0) == []
    # only d3 shares a word with the query; the others differ through the constant
    # dimension (d5 has the shortest vector), and d1, d2, d6 tie: collection order
    hits = index.search("nuclear", 4, exclude=["d4#0"])
    assert [h.chunk.id for h in hits] == ["d3#0", "d5#0", "d1#0", "d2#0"]
    with pytest.raises(NfevalError, match="empty query"):
        index.search("  ", 3)


def test_document_stage_limits_the_candidates():
    two_stage = ChunkIndex(DOCS, embed=bow_embed, k_docs=1)
    hits = two_stage.search("mandatory voting turnout", 10)
    assert [h.chunk.doc_id for h in hits] == ["d1"]  # BM25's best document only


@pytest.mark.parametrize("k_docs", [0, 2, 10])
@pytest.mark.parametrize("query", ["mandatory vote", "nuclear reactor", "zoo animal", "tax"])
def test_trusted_only_never_returns_an_untrusted_chunk(k_docs, query):
    idx = ChunkIndex(DOCS, embed=bow_embed, k_docs=k_docs)
    hits = idx.search(query, 10, trusted_only=True)
    assert hits and all(h.chunk.trusted for h in hits)
    assert {h.chunk.doc_id for h in hits} <= {"d1", "d3", "d5"}


def test_empty_collection_is_an_error():
    with pytest.raises(NfevalError, match="empty"):
        ChunkIndex([], embed=bow_embed)


# --------------------------------------------------------------------------- prompts

def test_rag_prompt_holds_question_and_numbered_chunks():
    chunks = chunk_documents(DOCS[:2])
    text = rag_user_prompt("  Should voting be mandatory? ", chunks)
    assert "Question: Should voting be mandatory?" in text
    assert text.index("[1] (Voting) Mandatory voting") < text.index("[2] (Vote blog) Mandatory")
    assert not text.startswith("#") and "{" not in text  # header dropped, slots filled
    assert NO_DOCUMENTS in rag_user_prompt("Q?", [])
    assert format_chunks([]) == NO_DOCUMENTS
    with pytest.raises(NfevalError):
        rag_user_prompt(" ", chunks)


def test_react_prompt_ends_at_thought():
    model = FakeModel([])
    prompt = react_step_prompt(model, "Q?", " x\nSearch[y]\nObservation: z\nThought:")
    assert prompt.startswith("<user>") and "Question: Q?" in prompt
    assert prompt.endswith("Thought: x\nSearch[y]\nObservation: z\nThought:")
    assert "Search[query]" in react_user_prompt("Q?")


# --------------------------------------------------------------------------- parser

@pytest.mark.parametrize("text, action, query, thought", [
    (" I need the pros.\nSearch[benefits of voting]", "search", "benefits of voting",
     "I need the pros."),
    ("Thought: look it up\nAction: Search[ nuclear waste ]\n", "search", "nuclear waste",
     "look it up"),
    ("Search: mandatory voting laws\nmore text", "search", "mandatory voting laws", ""),
    ("Search(school uniforms)", "search", "school uniforms", ""),
    ("I will look.\nSearch[zoo animals", "search", "zoo animals", "I will look."),
    ('Search["meat tax"]', "search", "meat tax", ""),
    (" Enough material.\nFinish", "finish", "", "Enough material."),
    ("Action: Finish[The answer is yes]", "finish", "", ""),
    ("Thought: done\nFinish\nSearch[more]", "finish", "", "done"),  # first action wins
    (" I will finish after I Search[tax policy]", "search", "tax policy",
     "I will finish after I"),  # "finish" inside a thought is no action
    ("Voting is a complex issue with many sides.", None, "", ""),
    ("", None, "", ""),
    ("Search[]", None, "", ""),  # a search without a query is unparsed
    ("We must research: this topic", None, "", ""),  # "research" is not an action
])
def test_parse_react_step(text, action, query, thought):
    step = parse_react_step(text)
    assert (step.action, step.query) == (action, query)
    if action is not None:
        assert step.thought == thought


# --------------------------------------------------------------------------- the loop

def fake_search(pool_size=30):
    """Returns the next k chunk ids c0, c1, ... not excluded; records every call."""
    pool = [Chunk(f"c{i}", f"doc{i}", "https://a.org", "", f"text {i}", True)
            for i in range(pool_size)]
    calls = []

    def search(query, k, exclude):
        calls.append((query, k))
        return [Retrieved(c, 1.0) for c in pool if c.id not in set(exclude)][:k]

    return search, calls


def canned(outputs):
    """A step function returning the given outputs in turn (the last one repeats)."""
    seen = []

    def step(pad):
        seen.append(pad)
        return outputs[min(len(seen) - 1, len(outputs) - 1)]

    return step, seen


def test_well_formed_run_stops_at_finish():
    search, calls = fake_search()
    step, pads = canned([" pros\nSearch[a]", " cons\nSearch[b]", " enough\nFinish"])
    res = react_gather("Q?", step, search, max_chunks=9, k_per_search=3, max_steps=5)
    assert [c.id for c in res.chunks] == [f"c{i}" for i in range(6)]
    assert calls == [("a", 3), ("b", 3)]
    assert (res.stop, res.unparsed_steps, res.fallback, res.n_steps) == ("finish", 0, False, 3)
    assert pads[1].startswith(" pros\nAction: Search[a]\nObservation: [1] text 0 [2] text 1")
    assert pads[2].endswith("Action: Search[b]\nObservation: [1] text 3 [2] text 4 [3] text 5"
                            "\nThought:")


def test_missing_finish_runs_to_the_step_limit():
    search, _ = fake_search()
    step, _ = canned([" x\nSearch[a]"])
    res = react_gather("Q?", step, search, max_chunks=9, k_per_search=2, max_steps=3)
    assert len(res.chunks) == 6 and res.stop == "max_steps" and not res.fallback


@pytest.mark.parametrize("k_per_search, expected_calls", [(3, [3, 3, 3]), (4, [4, 4, 1]),
                                                          (9, [9]), (20, [9])])
def test_never_more_than_nine_chunks(k_per_search, expected_calls):
    search, calls = fake_search()
    step, _ = canned([" x\nSearch[a]"])
    res = react_gather("Q?", step, search, max_chunks=9, k_per_search=k_per_search,
                       max_steps=10)
    assert len(res.chunks) == 9 and len({c.id for c in res.chunks}) == 9
    assert [k for _, k in calls] == expected_calls and res.stop == "max_chunks"


def test_search_that_ignores_exclude_and_k_is_cut_to_the_room_left():
    many = [Retrieved(Chunk(f"c{i}", "d", "u", "", "t", True), 1.0) for i in range(50)]
    step, _ = canned([" x\nSearch[a]"])
    res = react_gather("Q?", step, lambda q, k, ex: many, max_chunks=9, k_per_search=3)
    assert [len(s["new"]) for s in res.steps] == [3, 3, 3]  # repeats dropped, then cut
    assert [c.id for c in res.chunks] == [f"c{i}" for i in range(9)]


@pytest.mark.parametrize("retry", [True, False])
def test_garbage_steps_search_with_the_question_then_stop(retry):
    search, calls = fake_search()
    step, pads = canned(["Voting is good.\nMore words.", "still no format"])
    res = react_gather("Should voting be mandatory?", step, search, max_chunks=9,
                       k_per_search=3, max_steps=4, retry_action=retry)
    assert calls == [("Should voting be mandatory?", 3)]  # the default action
    assert len(res.chunks) == 3 and res.stop == "fallback"
    assert res.unparsed_steps == 2 and res.fallback
    assert res.action_retries == (2 if retry else 0)
    assert [s["default"] for s in res.steps] == [True, True]
    if retry:  # asked again for the action alone, with the first line as the thought
        assert pads[1] == " Voting is good.\nAction:"


def test_missing_action_is_asked_for_again():
    search, calls = fake_search()
    step, pads = canned(["Thought: I need facts about voting", " Search[compulsory voting]",
                         " I have enough.", " Finish"])
    res = react_gather("Q?", step, search, max_chunks=9, k_per_search=3, max_steps=4)
    assert calls == [("compulsory voting", 3)]
    assert (res.action_retries, res.unparsed_steps, res.fallback) == (2, 0, False)
    assert res.stop == "finish" and len(res.chunks) == 3
    assert pads[1] == " I need facts about voting\nAction:"
    assert pads[2].startswith(" I need facts about voting\nAction: Search[compulsory voting]")
    assert pads[3].endswith("Thought: I have enough.\nAction:")


def test_finish_at_once_gathers_nothing():
    search, calls = fake_search()
    step, _ = canned(["Finish"])
    res = react_gather("Q?", step, search)
    assert res.chunks == [] and calls == [] and res.stop == "finish"


def test_bad_limits_are_errors():
    search, _ = fake_search()
    with pytest.raises(NfevalError):
        react_gather("Q?", canned(["Finish"])[0], search, max_chunks=0)


# --------------------------------------------------------------------------- end to end, fake model

class FakeModel:
    """Duck-typed LanguageModel: renders ``<user>...<assistant>`` and returns canned text."""

    template = "model"

    def __init__(self, steps):
        self.steps = list(steps)
        self.prompts = []
        self.info = ModelInfo(name="fake", backend="fake", source="test", checksum="0")

    def chat_prompt(self, user, *, system=None, add_generation_prompt=True):
        return f"<user>{user}<assistant>"

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.prompts.append(prompt)
        if prompt.endswith(("Thought:", "Action:")):
            text = self.steps.pop(0) if self.steps else "Finish"
        else:
            text = f"answer from {prompt.count('[1]')} numbered list(s)"
        return Generation(text=text, finish_reason="stop", n_tokens=5)


ITEMS = [DebateItem(1, "Should voting be mandatory?", [PartialAnswer("Yes", "Turnout.")]),
         DebateItem(3, "Should schools have a uniform?", [PartialAnswer("No", "Freedom.")])]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("strategy", ["none", "vanilla", "react"])
def test_rag_answers_with_a_fake_model(cache, index, strategy):
    model = FakeModel([" need facts\nSearch[mandatory voting]", " done\nFinish",
                       "garbage", "garbage", "garbage", "garbage"])
    df = rag_answers(model, ITEMS, index, strategy, settings=RagSettings(k=2), progress=False)
    assert list(df["id"]) == [1, 3] and (df["strategy"] == strategy).all()
    answers = [p for p in model.prompts if not p.endswith(("Thought:", "Action:"))]
    assert len(answers) == 2
    if strategy == "none":
        assert answers[0] == "<user>Should voting be mandatory?<assistant>"
        assert (df["n_chunks"] == 0).all()
    elif strategy == "vanilla":
        assert (df["n_chunks"] == 2).all()
        assert df["chunk_ids"].iloc[1].split(";")[0] == "d5#0"
        assert "[2]" in answers[1] and "Question: Should schools have a uniform?" in answers[1]
    else:  # q1: one search of 3 chunks then Finish; q2: garbage twice (step and retry)
        # -> default search with the question; garbage twice again -> stop
        assert list(df["n_chunks"]) == [3, 3]
        assert list(df["unparsed_steps"]) == [0, 2] and list(df["fallback"]) == [False, True]
        assert list(df["action_retries"]) == [0, 2]
        assert list(df["stop"]) == ["finish", "fallback"]
    # a rerun is served from the cache: the model is not called again
    again = FakeModel([])
    df2 = rag_answers(again, ITEMS, index, strategy, settings=RagSettings(k=2), progress=False)
    assert again.prompts == [] and df2.equals(df)


def test_trusted_only_answers_use_trusted_chunks(cache, index):
    df = rag_answers(FakeModel([]), ITEMS, index, "vanilla",
                     settings=RagSettings(trusted_only=True, k=10), progress=False)
    assert (df["n_chunks"] == df["n_trusted_chunks"]).all() and (df["n_chunks"] == 3).all()


def test_strategy_errors(index):
    with pytest.raises(NfevalError, match="unknown RAG strategy"):
        rag_answers(FakeModel([]), ITEMS, index, "hyde", progress=False)
    with pytest.raises(NfevalError, match="ChunkIndex"):
        rag_answers(FakeModel([]), ITEMS, None, "vanilla", progress=False)


@pytest.mark.slow
def test_minilm_retrieval_on_the_hand_made_collection():
    """The real embedder (embedded MiniLM) finds the obvious page too."""
    idx = ChunkIndex(DOCS, k_docs=0)
    assert idx.search("Is nuclear power a low-carbon energy source?", 1)[0].chunk.doc_id == "d3"
    assert idx.search("Should pupils wear a uniform at school?", 1)[0].chunk.doc_id == "d5"


# --------------------------------------------------------------------------- stored search, tables

def test_search_results_are_stored_and_read_back(tmp_path):
    from nfeval_repro.store import close_store, use_store

    use_store("t_rag", tmp_path)
    try:
        first = ChunkIndex(DOCS, embed=bow_embed, k_docs=0, store_name="bow")
        found = first.search("mandatory voting", 2, exclude=["d2#0"])
        # a second index whose embedder would fail reads the stored ranking
        second = ChunkIndex(DOCS, embed=lambda texts: 1 / 0, k_docs=0, store_name="bow")
        again = second.search("mandatory voting", 2, exclude=["d2#0"])
        assert [(r.chunk.id, r.score) for r in again] == [(r.chunk.id, r.score) for r in found]
        assert (tmp_path / "results" / "t_rag" / "items" / "step.bow.jsonl").is_file()
        # another collection is another key: computed, not read
        other = ChunkIndex(DOCS[:3], embed=lambda texts: 1 / 0, k_docs=0, store_name="bow")
        with pytest.raises(ZeroDivisionError):
            other.search("mandatory voting", 2)
    finally:
        close_store()


def test_custom_embed_without_a_store_name_is_not_stored(tmp_path):
    from nfeval_repro.store import close_store, use_store

    use_store("t_rag", tmp_path)
    try:
        assert ChunkIndex(DOCS, embed=bow_embed, k_docs=0).store_name is None
        assert ChunkIndex(DOCS, k_docs=0).store_name == "rag-search-minilm-l6"
        ChunkIndex(DOCS, embed=bow_embed, k_docs=0).search("mandatory voting", 2)
        assert not (tmp_path / "results" / "t_rag" / "items").exists()
    finally:
        close_store()


def test_rag_table_rows_and_intervals():
    import pandas as pd

    from nfeval_repro.debateqa.rag import rag_table

    rows, scores = [], []
    for strategy, chunks, trusted, pd_base in (("none", 0, 0, 100.0), ("vanilla", 4, 3, 90.0),
                                               ("react", 2, 2, 95.0)):
        for q in (1, 2, 3):
            rows.append({"generator": "g", "strategy": strategy, "id": q,
                         "answer": "one two three" if strategy == "none" else "one",
                         "n_chunks": chunks, "n_trusted_chunks": trusted, "steps": 2,
                         "action_retries": 1, "unparsed_steps": 0, "fallback": q == 1})
            scores.append({"generator": "g", "strategy": strategy, "id": q, "metric": "pd",
                           "evaluator": "bb", "score": pd_base + q})
    table = rag_table(pd.DataFrame(rows), pd.DataFrame(scores), arm="strategy",
                      pairs=[("vanilla", "none"), ("react", "none")],
                      order=["none", "vanilla", "react"], seed=0)
    t = table.set_index(["strategy", "metric", "quantity"])
    assert t.loc[("vanilla", "pd", "mean"), "ours"] == pytest.approx(92.0)
    assert t.loc[("vanilla - none", "pd", "difference"), "ours"] == pytest.approx(-10.0)
    assert t.loc[("vanilla - none", "pd", "difference"), "ci_low"] == pytest.approx(-10.0)
    assert t.loc[("none", "length_words", "mean"), "ours"] == 3.0
    assert t.loc[("vanilla", "trusted_chunk_share", "share"), "ours"] == pytest.approx(0.75)
    assert ("none", "trusted_chunk_share", "share") not in t.index  # retrieves nothing
    assert t.loc[("react", "react_fallback_answers", "count"), "ours"] == 1
    assert math.isnan(t.loc[("react", "react_steps", "count"), "ci_low"])
    assert (table["n_questions"] == 3).all()
    means = table[(table.metric == "pd") & (table.quantity == "mean")]
    assert list(means["strategy"]) == ["none", "vanilla", "react"]
