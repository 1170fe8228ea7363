"""POV parsing and filters, the curation pipeline's funnel, and the project's document collection.

The pipeline tests use a fake model that returns canned text (no real model);
one slow test runs the real POV extraction on the smallest embedded model.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.curation.documents import DOCS_FILE, Document, load_documents
from nfeval_repro.debateqa.curation.pipeline import (
    PipelineSettings,
    filter_trusted,
    item_id,
    run_pipeline,
    search_documents,
    select_documents,
    write_items,
)
from nfeval_repro.debateqa.curation.povs import (
    ExtractionSettings,
    Pov,
    dedup_povs,
    explanation_prompt,
    extract_povs,
    filter_min_povs,
    number_documents,
    parse_povs,
    pov_prompt,
)
from nfeval_repro.debateqa.curation.sources import SourcedQuestion
from nfeval_repro.debateqa.curation.tld import is_trusted
from nfeval.models.base import Generation, ModelInfo

QUESTIONS = Path(__file__).resolve().parents[3] / "data" / "debateqa_sample" / "questions.jsonl"


# --------------------------------------------------------------------------- parser

@pytest.mark.parametrize("text, n_docs, expected", [
    # the prompt's own format
    (("1. Voting should be compulsory to raise turnout [docs: 1, 3]\n"
     "2. Compulsory voting infringes liberty [docs: 2]\n"
     "3. Compulsion changes campaign incentives [docs: 3,4]"),
     4, [("Voting should be compulsory to raise turnout.", (1, 3)),
         ("Compulsory voting infringes liberty.", (2,)),
         ("Compulsion changes campaign incentives.", (3, 4))]),
    # bullets, bold labels, parenthesised references, preamble and closing remark
    (("Here are the points of view:\n\n- **POV 1:** Rent control protects tenants. (Documents 1 and 2)\n"
     "- **POV 2:** Rent control shrinks supply. (Document 3)\n\nThese cover the debate."),
     3, [("Rent control protects tenants.", (1, 2)), ("Rent control shrinks supply.", (3,))]),
    # "1)" numbering, [1][3] references, "Sources: 2-4" ranges
    (("1) Zoos save endangered species [1][3]\n2) Captivity harms wide-ranging animals (Doc 2)\n"
     "3) Zoos should keep only species that thrive. Sources: 2-4"),
     4, [("Zoos save endangered species.", (1, 3)),
         ("Captivity harms wide-ranging animals.", (2,)),
         ("Zoos should keep only species that thrive.", (2, 3, 4))]),
    # labels on their own lines with the references on the next line
    ("POV: Cash is costly to handle\nDocuments: 1, 2\n\nPOV: Cash protects privacy\nDocuments: 3",
     3, [("Cash is costly to handle.", (1, 2)), ("Cash protects privacy.", (3,))]),
    # a year in brackets is not a document number; out-of-range numbers are dropped
    ("1. Nuclear plants built since (2018) are reliable [docs: 1, 9]\n2. New reactors are too slow",
     5, [("Nuclear plants built since (2018) are reliable.", (1,)),
         ("New reactors are too slow.", ())]),
    # "Explanation:" after the POV is cut off
    ("1. Point of view: Bag bans cut litter. Explanation: charges reduced bags [docs: 1]",
     2, [("Bag bans cut litter.", (1,))]),
    # no list markers: one candidate per line, headers dropped
    ("Points of view:\nHomework builds study habits (document 2)\nHomework widens gaps (document 1)",
     2, [("Homework builds study habits.", (2,)), ("Homework widens gaps.", (1,))]),
    # what a small model does: restate the task and the question, echo a document
    ("1. The question is whether voting should be mandatory. [docs: 1]\n"
     "2. The documents above take different points of view on the question. [docs: 2]\n"
     "3. Should voting be mandatory in a democracy?\n"
     "4. " + "word " * 80 + "[docs: 1]\n"
     "5. Mandatory voting legitimises results [docs: 2]",
     3, [("Mandatory voting legitimises results.", (2,))]),
    # what Qwen2.5-Coder-0.5B wrote: document numbers as indented sub-bullets, framed positions
    (("1. **The question**: Voting should be compulsory for all adults.\n   - **Documents**: 1\n\n"
     "2. **The documents**: The documents argue that voting should be compulsory for all adults.\n"
     "   - **Documents**: 1, 2\n"
     "3. Abstaining from a vote is itself a political act.\n   - 3"),
     3, [("Voting should be compulsory for all adults.", (1,)),
         ("Voting should be compulsory for all adults.", (1, 2)),
         ("Abstaining from a vote is itself a political act.", (3,))]),
    ("", 3, []),
    ("   \n\n", 3, []),
    (None, 3, []),
])
def test_parse_povs(text, n_docs, expected):
    got = parse_povs(text, n_docs, question="Should voting be mandatory in a democracy?")
    assert [(p.text, p.doc_indexes) for p in got] == expected


def test_parse_povs_without_n_docs_keeps_every_number():
    assert parse_povs("1. Taxes work well [docs: 7]")[0].doc_indexes == (7,)


@pytest.mark.parametrize("texts, expected", [
    (["Rent control protects tenants.", "Rent control protects tenants!",
      "Rent control reduces supply."], ["Rent control protects tenants.",
                                        "Rent control reduces supply."]),
    (["Rent control protects tenants.", "rent-control protects the tenants."],
     ["Rent control protects tenants."]),
    (["Zoos save species.", "Zoos harm animals."], ["Zoos save species.", "Zoos harm animals."]),
    ([], []),
])
def test_dedup_povs(texts, expected):
    povs = [Pov(t, (i + 1,)) for i, t in enumerate(texts)]
    assert [p.text for p in dedup_povs(povs)] == expected


def test_dedup_povs_merges_document_numbers():
    out = dedup_povs([Pov("A tax reduces drinking.", (1,)), Pov("A tax reduces drinking", (3, 1))])
    assert out == [Pov("A tax reduces drinking.", (1, 3))]


@pytest.mark.parametrize("counts, min_povs, kept", [
    ({"a": 2, "b": 3, "c": 5}, 3, ["b", "c"]),
    ({"a": 0, "b": 1}, 3, []),
    ({"a": 0, "b": 1}, 0, ["a", "b"]),
    ({}, 3, []),
])
def test_filter_min_povs(counts, min_povs, kept):
    povs = {k: [Pov(f"p{i} of {k} here.") for i in range(n)] for k, n in counts.items()}
    assert list(filter_min_povs(povs, min_povs)) == kept


def test_filter_min_povs_rejects_negative():
    with pytest.raises(NfevalError):
        filter_min_povs({}, -1)


def test_prompts_fill_their_slots():
    p = pov_prompt("Q{weird}?", ["first doc", "second {doc}"])
    assert "Question: Q{weird}?" in p and "Document 2:\nsecond {doc}" in p and "{" + "documents}" not in p
    e = explanation_prompt("Q?", "A view.", ["third doc"], [3])
    assert "Document 3:\nthird doc" in e and "Point of view: A view." in e
    assert number_documents(["one two three four"], max_chars=8) == "Document 1:\none two ..."
    with pytest.raises(NfevalError):
        pov_prompt("Q?", [])


class _Canned:
    template = "model"
    info = ModelInfo(name="canned", backend="fake", source="test")

    def __init__(self, text, finish_reason):
        self.text, self.finish_reason = text, finish_reason

    def chat_prompt(self, user, *, system=None):
        return user

    def generate(self, prompt, **kw):
        return Generation(text=self.text, finish_reason=self.finish_reason, n_tokens=9)


@pytest.mark.parametrize("finish_reason, expected", [
    ("stop", ["Fines fall unevenly on the poor.", "People who move often miss."]),
    ("length", ["Fines fall unevenly on the poor."]),
])
def test_extract_povs_drops_a_line_cut_by_max_tokens(finish_reason, expected):
    model = _Canned("1. Fines fall unevenly on the poor [docs: 1]\n2. People who move often miss",
                    finish_reason)
    ex = extract_povs(model, "Q?", ["doc one", "doc two"], use_cache=False)
    assert [p.text for p in ex.povs] == expected and ex.raw == model.text


# --------------------------------------------------------------------------- fake model

class FakeModel:
    """Canned answers: POV lists chosen by a word of the question, explanations echo the POV."""

    template = "model"

    def __init__(self, pov_outputs: dict[str, str], fail: bool = False):
        self.pov_outputs = pov_outputs
        self.fail = fail
        self.calls: list[str] = []
        self.info = ModelInfo(name="fake", backend="fake", source="test", checksum="0")

    def chat_prompt(self, user: str, *, system: str | None = None) -> str:
        return f"<user>{user}</user>"

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        if self.fail:
            raise AssertionError("the cache should have answered")
        self.calls.append(prompt)
        if "Point of view:" in prompt:
            pov = prompt.split("Point of view:")[1].split("\n")[0].strip()
            return Generation(text=f"Explanation: The documents argue that {pov.lower()}",
                              n_tokens=12)
        for word, text in self.pov_outputs.items():
            if f"Question: {word}" in prompt:
                return Generation(text=text, n_tokens=30)
        return Generation(text="", n_tokens=0)


def _docs() -> list[Document]:
    def d(i, q, url, text):
        return Document(f"d{i}", url, text, q)

    return [
        # Pages of equal length whose BM25 order is the count of the question's word.
        # question 1 (apples): 4 trusted pages
        d(1, 1, "https://a.gov/1", "apples apples apples growers"),
        d(2, 1, "https://b.edu/2", "apples apples harvest study"),
        d(3, 1, "https://c.org/3", "apples campaign against pesticides"),
        d(4, 1, "https://www.d.gov.uk/4", "apples trade guidance note"),
        # question 2 (boats): 2 trusted, 2 untrusted -> dropped at the document stage
        d(5, 2, "https://e.com/5", "boats boats boats shop"),
        d(6, 2, "https://f.gov/6", "boats boats safety rules"),
        d(7, 2, "https://g.net/7", "boats forum chat thread"),
        d(8, 2, "https://H.ORG:8080/8", "boats harbour club news"),
        # question 3 (cars): 3 trusted, 1 untrusted
        d(9, 3, "https://i.info/9", "cars cars cars centre"),
        d(10, 3, "https://j.pro/10", "cars cars insurance costs"),
        d(11, 3, "https://k.edu/11", "cars traffic research data"),
        d(12, 3, "https://l.io/12", "cars startup pitch deck"),
        # a distractor
        d(13, None, "https://m.gov/13", "volcanoes lava"),
    ]


QS = [SourcedQuestion("debateqa-sample", "1", "apples?"),
      SourcedQuestion("debateqa-sample", "2", "boats?"),
      SourcedQuestion("debateqa-sample", "3", "cars?")]

POV_OUTPUTS = {
    "apples": "1. Apples help growers [docs: 1, 2]\n2. Apples need fewer pesticides [docs: 3]\n"
              "3. Apple trade deserves guidance [docs: 4]\n4. Apples help growers! [docs: 2]",
    "cars": "1. Cars clog city centres [docs: 1]\n2. Cars cost a lot to insure [docs: 2]",
}


def test_pipeline_funnel_on_fixture(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    model = FakeModel(POV_OUTPUTS)
    res = run_pipeline(model, PipelineSettings(dedup=False), questions=QS, docs=_docs(),
                       progress=False)
    f = res.funnel.set_index("stage")
    assert f.loc["sourced", "questions"] == 3
    assert f.loc["document search", "questions"] == 3 and f.loc["document search", "documents"] == 12
    assert f.loc["trusted TLDs", "documents"] == 9  # 4 + 2 + 3
    assert f.loc[">= 3 documents", "questions"] == 2 and f.loc[">= 3 documents", "documents"] == 7
    assert f.loc["POV extraction", "questions"] == 2 and f.loc["POV extraction", "povs"] == 5
    assert f.loc[">= 3 POVs", "questions"] == 1 and f.loc[">= 3 POVs", "povs"] == 3
    assert f.loc["explanation expansion", "questions"] == 1
    assert f.loc["explanation expansion", "povs"] == 3
    assert "LLM stages run on" not in f.index  # no limit
    # release format
    assert res.items == [{"id": 1, "question": "apples?", "partial_answers": [
        {"point_of_view": "Apples help growers.",
         "explanation": "The documents argue that apples help growers."},
        {"point_of_view": "Apples need fewer pesticides.",
         "explanation": "The documents argue that apples need fewer pesticides."},
        {"point_of_view": "Apple trade deserves guidance.",
         "explanation": "The documents argue that apple trade deserves guidance."}]}]
    q = res.questions.set_index("question_id")
    assert q.loc["2", "dropped_at"] == "documents" and q.loc["2", "trusted"] == 2
    assert q.loc["3", "dropped_at"] == "povs" and q.loc["3", "povs"] == 2
    assert q.loc["1", "dropped_at"] == "" and q.loc["1", "povs_parsed"] == 4
    # an explanation sees only its POV's documents
    pas = res.partial_answers
    assert list(pas.explanation_doc_ids) == ["d1,d2", "d3", "d4"]
    assert len(model.calls) == 2 + 3
    # a rerun is answered from the cache
    again = run_pipeline(FakeModel(POV_OUTPUTS, fail=True), PipelineSettings(dedup=False),
                         questions=QS, docs=_docs(), progress=False)
    assert again.items == res.items


def test_pipeline_limit_and_no_model(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    res = run_pipeline(FakeModel(POV_OUTPUTS), PipelineSettings(dedup=False, limit=1),
                       questions=QS, docs=_docs(), progress=False)
    f = res.funnel.set_index("stage")
    assert f.loc["LLM stages run on", "questions"] == 1
    assert f.loc[">= 3 POVs", "questions"] == 1
    assert res.questions.set_index("question_id").loc["3", "dropped_at"] == "limit"
    bare = run_pipeline(None, PipelineSettings(dedup=False), questions=QS, docs=_docs())
    assert list(bare.funnel.stage) == ["sourced", "deduplicated", "document search",
                                       "trusted TLDs", ">= 3 documents"]
    assert bare.items == []


def test_pipeline_dedup_with_given_embeddings(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    qs = QS + [SourcedQuestion("other", "x", "apples, really?")]
    emb = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=np.float32)
    res = run_pipeline(None, questions=qs, docs=_docs(), dedup_embeddings=emb)
    f = res.funnel.set_index("stage")
    assert f.loc["sourced", "questions"] == 4 and f.loc["deduplicated", "questions"] == 3
    assert (res.questions.dropped_at == "deduplicated").sum() == 1


def test_search_methods_and_filters():
    docs = _docs()
    linked = search_documents(QS[:1], docs, method="linked")
    assert set(linked.doc_id) == {"d1", "d2", "d3", "d4"} and linked.linked.all()
    assert list(linked["rank"]) == [1, 2, 3, 4]
    bm25 = search_documents(QS[:1], docs, method="bm25", min_relative_score=0.0)
    assert set(bm25.doc_id) == {"d1", "d2", "d3", "d4"}  # no other page says "apples"
    other = search_documents([SourcedQuestion("webglm", "1", "apples?")], docs, method="linked")
    assert other.empty  # only DebateQA ids link to the collection
    assert item_id("webglm", "1") == "webglm:1" and item_id("debateqa-sample", "9001") == 9001
    trusted = filter_trusted(search_documents(QS, docs))
    assert all(is_trusted(u) for u in trusted.url)
    sel = select_documents(trusted, min_docs=3, max_docs=3)
    assert sel == {("debateqa-sample", "1"): ["d1", "d2", "d3"],
                   ("debateqa-sample", "3"): ["d9", "d10", "d11"]}
    with pytest.raises(NfevalError):
        search_documents(QS, docs, method="google")
    with pytest.raises(NfevalError):
        select_documents(trusted, min_docs=4, max_docs=3)


def test_write_items_reads_back_as_a_split(tmp_path):
    from nfeval.data import load_debateqa

    items = [{"id": 9001, "question": "Q?", "partial_answers": [
        {"point_of_view": "P.", "explanation": "E."}]}]
    path = write_items(items, tmp_path / "items.jsonl")
    back = load_debateqa(path)
    assert back[0].id == 9001 and back[0].question == "Q?"


# --------------------------------------------------------------------------- the collection

@pytest.fixture(scope="module")
def collection() -> list[dict]:
    return [json.loads(ln) for ln in DOCS_FILE.read_text(encoding="utf-8").splitlines()]


def test_documents_file_is_valid(collection):
    assert load_documents() and len(load_documents()) == len(collection)
    assert {tuple(sorted(d)) for d in collection} == {("id", "question_id", "text", "title", "url")}
    assert len({d["id"] for d in collection}) == len(collection)
    assert len({d["url"] for d in collection}) == len(collection)
    for d in collection:
        assert 120 <= len(d["text"].split()) <= 300, d["id"]
        assert d["title"].strip()


def test_documents_cover_every_sample_question(collection):
    qids = {json.loads(ln)["id"] for ln in QUESTIONS.read_text().splitlines() if ln.strip()}
    per_q = Counter(d["question_id"] for d in collection if d["question_id"] is not None)
    assert set(per_q) == qids and len(qids) == 40
    assert all(3 <= n <= 6 for n in per_q.values())
    assert sum(1 for d in collection if d["question_id"] is None) >= 10  # distractors
    trusted = Counter(d["question_id"] for d in collection
                      if d["question_id"] is not None and is_trusted(d["url"]))
    few = [q for q in qids if trusted[q] < 3]
    assert 5 <= len(few) <= 8
    assert all(trusted[q] <= 5 for q in qids)


def test_documents_exercise_the_tld_filter(collection):
    urls = [d["url"] for d in collection]
    assert any(".gov.uk/" in u for u in urls) and any(".ac.uk/" in u for u in urls)
    assert any(u.split("/")[2] != u.split("/")[2].lower() for u in urls if "//" in u)
    assert any(":" in u.split("/")[2] for u in urls if u.startswith("http"))
    assert any(not is_trusted(u) for u in urls) and any(is_trusted(u) for u in urls)


def test_pipeline_on_the_collection_without_a_model():
    res = run_pipeline(None, PipelineSettings(dedup=False))
    f = res.funnel.set_index("stage")
    assert f.loc["sourced", "questions"] == 40
    assert 32 <= f.loc[">= 3 documents", "questions"] <= 35
    used = res.questions.loc[res.questions.used > 0, "used"]
    assert used.between(3, 5).all()


# --------------------------------------------------------------------------- real model

@pytest.mark.slow
def test_extract_povs_with_an_embedded_model():
    from nfeval.models import load_model

    lm = load_model("smollm2-135m-instruct", backend="llama")
    docs = [d.text for d in load_documents() if d.question_id == 9004][:2]
    ex = extract_povs(lm, "Should there be a tax on sugary drinks?", docs,
                      ExtractionSettings(max_tokens=48), use_cache=False)
    assert isinstance(ex.raw, str) and ex.n_tokens <= 48
    assert all(set(p.doc_indexes) <= {1, 2} for p in ex.povs)
