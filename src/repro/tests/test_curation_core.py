"""Curation core: dedup (A.1), the trusted-TLD filter (Table 10), chunking, BM25, documents."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.curation.chunking import chunk_chars, chunk_tokens
from nfeval_repro.debateqa.curation.dedup import dedup_questions, greedy_vertex_cover, similarity_edges
from nfeval_repro.debateqa.curation.documents import BM25Index, Document, load_documents, tokenize
from nfeval_repro.debateqa.curation.sources import SOURCES, SourcedQuestion, load_source, load_sources
from nfeval_repro.debateqa.curation.tld import TRUSTED_TLDS, is_trusted, url_host, url_suffix

# --------------------------------------------------------------------------- TLD filter

URLS = [
    # (url, suffix, trusted under TRUSTED_TLDS)
    ("https://www.cdc.gov/flu/index.html", "gov", True),
    ("https://a.b.c.harvard.edu/x?y=1#z", "edu", True),  # deep subdomain
    ("HTTPS://WWW.NIH.GOV/Research", "gov", True),  # uppercase
    ("http://www.who.int/", "int", False),
    ("https://www.nih.gov:8443/path", "gov", True),  # port
    ("http://user:pw@www.census.gov/", "gov", True),  # userinfo
    ("http://cdc.gov@evil.com/", "com", False),  # userinfo trick: the host is evil.com
    ("http://cdc.gov.evil.com/", "com", False),  # trusted name as a subdomain
    ("http://gov.example.net/", "net", False),
    ("https://www.gov.uk/guidance", "gov.uk", True),  # country form of gov
    ("https://www.ox.ac.uk/", "ac.uk", True),  # academic country form counts as edu
    ("https://www.bbc.co.uk/news", "co.uk", False),
    ("https://www.oxfam.org.uk/", "org.uk", True),
    ("https://www.mhlw.go.jp/", "go.jp", True),
    ("https://www.service-public.gouv.fr/", "gouv.fr", True),
    ("https://www.anu.edu.au/", "edu.au", True),
    ("https://example.com.au/", "com.au", False),
    ("https://x.gov.zz/", None, False),  # under no listed suffix
    ("https://x.k12.ca.us/", "k12.ca.us", False),  # three-label suffixes are read whole
    ("https://x.blogspot.com/", "com", False),  # private suffixes are not suffixes here
    ("https://wikipedia.org/wiki/X", "org", True),
    ("https://example.pro/", "pro", True),
    ("https://example.info/", "info", True),
    ("https://example.com./", "com", False),  # trailing dot of a fully qualified name
    ("https://bücher.de/", "de", False),  # international name
    ("cdc.gov/flu", "gov", True),  # no scheme: read as http
    ("www.stanford.edu", "edu", True),
    ("//www.nasa.gov/", "gov", True),  # network-path reference
    ("cdc.gov:8080/x", "gov", True),
    ("http://192.168.1.10/", None, False),  # IP addresses have no suffix
    ("http://[2001:db8::1]/", None, False),
    ("http://999.1.1.1/", None, False),
    ("http://localhost:8000/", None, False),
    ("http://gov/", None, False),  # the suffix alone
    ("http://gov.uk/", None, False),
    ("http://cdc..gov/", None, False),  # empty label
    ("http://-cdc-.gov/", None, False),  # bad label
    ("http://cdc.gov:99999999/", None, False),  # bad port
    ("http://cdc.gov:abc/", None, False),
    ("ftp://files.nasa.gov/", None, False),  # other scheme
    ("mailto:someone@cdc.gov", None, False),
    ("javascript:alert(1)", None, False),
    ("not a url", None, False),
    ("", None, False),
    ("http://", None, False),
    ("https://exa mple.gov/", None, False),
]


@pytest.mark.parametrize("url,suffix,trusted", URLS)
def test_url_suffix_and_trust(url, suffix, trusted):
    assert url_suffix(url) == suffix
    assert is_trusted(url) is trusted


def test_trusted_tlds_are_the_papers_five():
    assert TRUSTED_TLDS == ("gov", "edu", "org", "pro", "info")


@pytest.mark.parametrize("url,tlds,expected", [
    ("https://www.gov.uk/x", ["gov.uk"], True),  # a multi-label entry matches exactly
    ("https://www.cdc.gov/", ["gov.uk"], False),
    ("https://www.cdc.gov/", [".GOV"], True),  # leading dot and case are ignored
    ("https://example.com/", ["com"], True),
    ("https://www.ox.ac.uk/", ["gov"], False),
    ("https://www.cdc.gov/", [], False),
])
def test_is_trusted_with_own_list(url, tlds, expected):
    assert is_trusted(url, tlds) is expected


@pytest.mark.parametrize("bad", [None, 3, b"http://cdc.gov"])
def test_non_strings_are_bad_urls(bad):
    assert url_host(bad) is None and is_trusted(bad) is False


# --------------------------------------------------------------------------- dedup

def _unit(rows):
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def test_similarity_edges_hand_checked():
    emb = _unit([[1, 0], [1, 0], [0, 1], [1, 1]])  # cos(0,3) = cos(2,3) = 0.7071
    assert [(i, j) for i, j, _ in similarity_edges(emb, 0.99)] == [(0, 1)]
    assert [(i, j) for i, j, _ in similarity_edges(emb, 0.7)] == [(0, 1), (0, 3), (1, 3), (2, 3)]
    assert similarity_edges(emb, 0.7)[1][2] == pytest.approx(math.sqrt(0.5), abs=1e-6)


@pytest.mark.parametrize("block_size", [1, 2, 3, 1000])
def test_similarity_edges_blocks_agree(block_size):
    rng = np.random.default_rng(0)
    emb = _unit(rng.normal(size=(40, 3)))
    full = similarity_edges(emb, 0.9, block_size=1000)
    got = similarity_edges(emb, 0.9, block_size=block_size)
    assert [(i, j) for i, j, _ in got] == [(i, j) for i, j, _ in full] and full


@pytest.mark.parametrize("edges,expected", [
    ([], []),
    ([(0, 1), (0, 2), (0, 3)], [0]),  # a star: the centre covers it
    ([(0, 1), (1, 2), (2, 3), (3, 4)], None),  # a path: any cover, checked below
    ([(0, 1), (0, 2), (1, 2)], None),  # a triangle: two must go
])
def test_greedy_cover_hand_checked(edges, expected):
    removed = greedy_vertex_cover(5, edges, seed=0)
    if expected is not None:
        assert removed == expected
    assert all(i in removed or j in removed for i, j in edges)
    if edges == [(0, 1), (0, 2), (1, 2)]:
        assert len(removed) == 2


def test_greedy_takes_highest_degree_first():
    # 4 has degree 3, the rest at most 2: 4 goes first.
    edges = [(0, 4), (1, 4), (2, 4), (0, 1)]
    assert greedy_vertex_cover(5, edges, seed=7)[0] == 4


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_greedy_cover_is_a_cover_and_deterministic(seed):
    rng = np.random.default_rng(100 + seed)
    n = 60
    edges = [(int(i), int(j)) for i, j in rng.integers(0, n, size=(150, 2)) if i != j]
    a = greedy_vertex_cover(n, edges, seed=seed)
    assert a == greedy_vertex_cover(n, edges, seed=seed)
    assert len(set(a)) == len(a)
    gone = set(a)
    assert all(i in gone or j in gone for i, j in edges)


def test_greedy_ties_follow_the_seed():
    # One edge: either end may go; different seeds must be able to pick either.
    picks = {greedy_vertex_cover(2, [(0, 1)], seed=s)[0] for s in range(20)}
    assert picks == {0, 1}


def test_greedy_rejects_out_of_range_edges():
    with pytest.raises(NfevalError, match="outside"):
        greedy_vertex_cover(2, [(0, 2)])


QUESTIONS = [
    SourcedQuestion("a", "1", "Should voting be mandatory?"),
    SourcedQuestion("a", "2", "Is nuclear power safe?"),
    SourcedQuestion("b", "1", "Should voting be compulsory?"),  # duplicate of a/1
    SourcedQuestion("b", "2", "Should zoos exist?"),
    SourcedQuestion("c", "1", "Should voting be required by law?"),  # duplicate of a/1, b/1
]
EMB = _unit([[1, 0, 0], [0, 1, 0], [0.98, 0.02, 0], [0, 0, 1], [0.97, 0, 0.03]])


def test_dedup_removes_known_duplicates():
    r = dedup_questions(QUESTIONS, embeddings=EMB, threshold=0.9, seed=0)
    assert len(r.edges) == 3  # the three voting questions form a triangle
    assert len(r.removed) == 2 and len(r.kept) == 3
    voting = {("a", "1"), ("b", "1"), ("c", "1")}
    assert len(voting & set(r.kept)) == 1
    assert {("a", "2"), ("b", "2")} <= set(r.kept)
    kept_pos = [r.ids.index(k) for k in r.kept]
    assert not [e for e in r.edges if e[0] in kept_pos and e[1] in kept_pos]  # independent set
    assert set(r.removed_by) == set(r.removed)
    assert all(v in voting and v in r.kept for v in r.removed_by.values())
    counts = r.counts().set_index("source")
    assert counts["before"].to_dict() == {"a": 2, "b": 2, "c": 1}
    assert (counts["after"] == counts["before"] - counts["removed"]).all()
    assert counts["removed"].sum() == 2
    assert r.edge_counts()["edges"].sum() == 3


def test_dedup_deterministic_and_seeded():
    runs = {s: dedup_questions(QUESTIONS, embeddings=EMB, threshold=0.9, seed=s).removed
            for s in range(12)}
    assert runs[3] == dedup_questions(QUESTIONS, embeddings=EMB, threshold=0.9, seed=3).removed
    assert len({tuple(sorted(v)) for v in runs.values()}) > 1  # ties really use the seed


def test_dedup_empty_and_single():
    r = dedup_questions([], embeddings=np.zeros((0, 3)))
    assert r.kept == [] and r.removed == [] and r.edges == [] and r.counts().empty
    r = dedup_questions([("s", "1", "q")], embeddings=_unit([[1, 0]]))
    assert r.kept == [("s", "1")] and r.removed == []


def test_dedup_exact_duplicates_threshold_one():
    qs = [("s", str(i), "same") for i in range(4)]
    r = dedup_questions(qs, embeddings=_unit([[1, 2]] * 4), threshold=0.999)
    assert len(r.kept) == 1 and len(r.removed) == 3


@pytest.mark.parametrize("questions,emb,match", [
    ([("s", "1", "q"), ("s", "1", "r")], [[1, 0], [0, 1]], "twice"),
    ([("s", "1")], [[1, 0]], "source, question_id, text"),
    ([("s", "1", "q")], [[1, 0], [0, 1]], "2 embeddings for 1"),
])
def test_dedup_bad_input(questions, emb, match):
    with pytest.raises(NfevalError, match=match):
        dedup_questions(questions, embeddings=_unit(emb))


def test_dedup_bad_threshold():
    with pytest.raises(NfevalError, match="threshold"):
        similarity_edges(EMB, 1.5)


# --------------------------------------------------------------------------- chunking

TEXTS = [
    "",
    "one",
    "   ",
    "Hello world. This is a test!\n\nNew paragraph here? Yes.   " + "x" * 50 + "  end",
    "y" * 5000,  # one huge word
    "a " * 3000,
    " " * 700 + "lead and trail" + "\n" * 300,
    "Ünïcödé text — «quoted». 中文句子。第二句！ emoji 🙂🙂 here.\n\n" * 40,
    "Sentence one. Sentence two? Sentence three! " * 200 + "\n\n" + "Para two. " * 50,
    "tab\tseparated\twords\r\nwindows\r\n\r\nlines",
]
BUDGETS = [1, 7, 50, 200, 2000]


def _no_space(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
@pytest.mark.parametrize("max_chars", BUDGETS)
def test_chunk_chars_bounded_without_loss_or_overlap(text, max_chars):
    chunks = chunk_chars(text, max_chars)
    assert all(len(c) <= max_chars for c in chunks)
    # every non-space character exactly once, in order: nothing dropped, no overlap
    assert _no_space("".join(chunks)) == _no_space(text)
    if max_chars > 1:  # at one character the splitter may keep a lone space as a piece
        assert all(c and c == c.strip() for c in chunks)


# Expected chunks traced by hand through LangChain's RecursiveCharacterTextSplitter
# (separators "\n\n", "\n", " ", ""; each separator starts the piece after it;
# greedy merge; strip) with chunk_overlap=0.
PARAGRAPHS = "First sentence. Second sentence.\n\nSecond paragraph."


@pytest.mark.parametrize("text, max_chars, expected", [
    (PARAGRAPHS, 10**6, [PARAGRAPHS]),
    ("  padded \n", 100, ["padded"]),  # stripped
    (PARAGRAPHS, 40, ["First sentence. Second sentence.", "Second paragraph."]),
    # the first paragraph (32) is over 20: it falls back to spaces (no sentence level)
    (PARAGRAPHS, 20, ["First sentence.", "Second sentence.", "Second paragraph."]),
    ("a b\nc d", 4, ["a b", "c d"]),  # a line break before a space
    ("one two three four", 9, ["one two", "three", "four"]),  # greedy, nothing repeated
    ("abcdefgh", 3, ["abc", "def", "gh"]),  # an over-long word is cut between characters
    ("", 10, []),
    ("   \n\n  ", 10, []),
])
def test_chunk_chars_hand_traced(text, max_chars, expected):
    assert chunk_chars(text, max_chars) == expected


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
@pytest.mark.parametrize("max_tokens", [1, 3, 100])
def test_chunk_tokens_whitespace_words(text, max_tokens):
    chunks = chunk_tokens(text, None, max_tokens)
    assert all(len(c.split()) <= max_tokens for c in chunks)
    assert _no_space("".join(chunks)) == _no_space(text)


@pytest.mark.parametrize("budget", [0, -3])
def test_chunk_bad_budget(budget):
    with pytest.raises(NfevalError, match="budget"):
        chunk_chars("text", budget)
    with pytest.raises(NfevalError, match="budget"):
        chunk_tokens("text", None, budget)


def _word_tokenizer():
    """A real Hugging Face tokenizer with no files: one token per run of word
    characters and per run of punctuation (the Whitespace pre-tokenizer)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def test_chunk_tokens_counts_the_tokenizers_tokens():
    tok = _word_tokenizer()
    # Yes . | No , | maybe . : two tokens a word, so no two words fit in three
    assert chunk_tokens("Yes. No, maybe.", tok, 3) == ["Yes.", "No,", "maybe."]
    assert chunk_tokens("Yes. No, maybe.", tok, 4) == ["Yes. No,", "maybe."]
    assert chunk_tokens("Yes. No, maybe.", None, 2) == ["Yes. No,", "maybe."]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_chunk_tokens_bounded_without_loss(text):
    tok = _word_tokenizer()
    chunks = chunk_tokens(text, tok, 40)
    assert all(len(tok.tokenize(c)) <= 40 for c in chunks)
    assert _no_space("".join(chunks)) == _no_space(text)


def test_chunk_tokens_needs_a_hugging_face_tokenizer():
    with pytest.raises(NfevalError, match="Hugging Face tokenizer"):
        chunk_tokens("some text", object(), 10)


@pytest.mark.slow
def test_chunk_tokens_minilm_tokenizer():
    from transformers import AutoTokenizer

    from nfeval.models.registry import minilm_path

    tok = AutoTokenizer.from_pretrained(str(minilm_path()))
    text = TEXTS[8] + TEXTS[7]
    chunks = chunk_tokens(text, tok, 100)
    assert len(chunks) > 1 and _no_space("".join(chunks)) == _no_space(text)
    assert all(len(tok(c, add_special_tokens=False)["input_ids"]) <= 100 for c in chunks)


# --------------------------------------------------------------------------- BM25

def test_tokenize():
    assert tokenize("The Cat's hat, 2 CATS!") == ["the", "cat", "s", "hat", "2", "cats"]


def test_bm25_hand_checked():
    texts = ["cat sat", "dog sat", "cat cat"]
    idx = BM25Index(texts, k1=1.5, b=0.75)
    # idf(cat) = log(1 + (3 - 2 + .5) / (2 + .5)) = log(1.6); all lengths 2 = avgdl.
    idf = math.log(1.6)
    one = idf * 1 * 2.5 / (1 + 1.5)  # tf 1
    two = idf * 2 * 2.5 / (2 + 1.5)  # tf 2
    got = idx.search("cat", 3)
    assert [i for i, _ in got] == [2, 0, 1]
    assert got[0][1] == pytest.approx(two) and got[1][1] == pytest.approx(one)
    assert got[2][1] == 0.0


def test_bm25_length_normalisation_and_ties():
    idx = BM25Index(["apple", "apple banana cherry date", "banana", "apple"])
    got = idx.search("apple", 4)
    assert [i for i, _ in got[:3]] == [0, 3, 1]  # short documents first; 0 and 3 tie by index
    assert got[0][1] == got[1][1]
    assert idx.search("apple", 0) == []
    assert len(idx.search("unknownword", 10)) == 4


def test_bm25_empty_collection_and_bad_k():
    assert BM25Index([]).search("x", 3) == []
    with pytest.raises(NfevalError):
        BM25Index(["a"]).search("a", -1)
    with pytest.raises(NfevalError):
        BM25Index(["a"], b=2.0)


# --------------------------------------------------------------------------- documents

def _write(tmp_path, lines):
    p = tmp_path / "docs.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_load_documents_ok(tmp_path):
    p = _write(tmp_path, [
        json.dumps({"id": "d1", "question_id": 9001, "url": "https://cdc.gov", "title": "T",
                    "text": "body"}),
        json.dumps({"url": "https://x.com", "text": ""}),
    ])
    docs = load_documents(p)
    assert docs[0] == Document("d1", "https://cdc.gov", "body", 9001, "T")
    assert docs[1] == Document("line2", "https://x.com", "", None, "")


@pytest.mark.parametrize("lines,match", [
    (["{not json"], "line 1: invalid JSON"),
    (['{"url": "u", "text": "t"}', "", '{"url": "v", "text": "t"}'], "line 2: blank line"),
    (['["url", "text"]'], "line 1: expected a JSON object"),
    (['{"text": "t"}'], "line 1: url is missing"),
    (['{"url": "u"}'], "line 1: text is missing"),
    (['{"url": "u", "text": 3}'], "text is missing or not a string"),
    (['{"id": "a", "url": "u", "text": "t"}', '{"id": "a", "url": "v", "text": "t"}'],
     "line 2: id 'a' already used on line 1"),
    (['{"url": "u", "text": "t", "question_id": "9001"}'], "question_id"),
    (['{"url": "u", "text": "t", "question_id": true}'], "question_id"),
    (['{"url": "u", "text": "t", "id": [1]}'], "id"),
])
def test_load_documents_errors(tmp_path, lines, match):
    with pytest.raises(NfevalError, match=match):
        load_documents(_write(tmp_path, lines))


def test_load_documents_missing_file(tmp_path):
    with pytest.raises(NfevalError, match="does not exist"):
        load_documents(tmp_path / "nope.jsonl")
    with pytest.raises(NfevalError, match="folder"):
        load_documents(tmp_path)


# --------------------------------------------------------------------------- sources

def test_sample_source():
    qs = load_source("debateqa-sample")
    assert len(qs) == 40 and qs[0].source == "debateqa-sample"
    _, qid, text = qs[0]
    assert qid == "9001" and text.endswith("?")


def test_sources_skip_with_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_OFFLINE", "1")
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    monkeypatch.delenv("NFEVAL_MIRROR", raising=False)
    qs, skipped = load_sources(SOURCES, limit=5)
    assert {q.source for q in qs} == {"debateqa-sample"} and len(qs) == 5
    assert set(skipped) == set(SOURCES) - {"debateqa-sample"}
    assert all(reason for reason in skipped.values())


def test_sources_unknown_name():
    with pytest.raises(NfevalError, match="unknown question source"):
        load_sources(["nope"])


@pytest.mark.mirror
def test_linkage_sources(mirror):
    qs, skipped = load_sources(["antique", "trec-dl-nf", "webglm"])
    counts = {s: sum(q.source == s for q in qs) for s in ("antique", "trec-dl-nf", "webglm")}
    assert counts == {"antique": 500, "trec-dl-nf": 55, "webglm": 100} and not skipped


# --------------------------------------------------------------------------- filter and retrieval helpers

DOCS = [
    Document("a1", "https://www.cdc.gov/x", "voting turnout compulsory", 1),
    Document("a2", "https://www.ox.ac.uk/y", "compulsory voting fines", 1),
    Document("a3", "https://blog.example.com/z", "voting is a right", 1),
    Document("a4", "https://a.org/", "turnout in elections", 1),
    Document("b1", "https://b.info/", "nuclear power safety", 2),
    Document("b2", "https://b.com/", "nuclear waste", 2),
    Document("c1", "not a url", "pasta recipes", None),
]


def test_trusted_documents_and_suffix_counts():
    from nfeval_repro.debateqa.curation.documents import suffix_counts, trusted_documents

    assert [d.doc_id for d in trusted_documents(DOCS)] == ["a1", "a2", "a4", "b1"]
    counts = suffix_counts(DOCS)
    assert counts["documents"].sum() == len(DOCS)
    assert not dict(zip(counts["suffix"], counts["trusted"]))["(bad url)"]
    assert list(counts["trusted"]) == sorted(counts["trusted"], reverse=True)


def test_documents_per_question():
    from nfeval_repro.debateqa.curation.documents import documents_per_question

    t = documents_per_question(DOCS, [1, 2, 3], min_docs=3, max_docs=5).set_index("question_id")
    assert t.loc[1].tolist() == [4, 3, True, 3]
    assert t.loc[2].tolist() == [2, 1, False, 0]
    assert t.loc[3].tolist() == [0, 0, False, 0]
    t = documents_per_question(DOCS, [1], min_docs=1, max_docs=2).set_index("question_id")
    assert t.loc[1, "used"] == 2
    with pytest.raises(NfevalError):
        documents_per_question(DOCS, [1], min_docs=4, max_docs=3)


@pytest.mark.parametrize("method", ["bm25", "linked"])
def test_retrieve(method):
    from nfeval_repro.debateqa.curation.documents import retrieve

    hits = retrieve({1: "compulsory voting", 2: "nuclear"}, DOCS, k=2, method=method)
    assert hits.groupby("question_id")["rank"].apply(list).to_dict() == {1: [1, 2], 2: [1, 2]}
    first = hits[hits["rank"] == 1].set_index("question_id")["doc_id"].to_dict()
    assert first[1] in {"a1", "a2"} and first[2] in {"b1", "b2"}
    if method == "linked":
        assert hits["linked"].all()


def test_retrieve_bad_method():
    from nfeval_repro.debateqa.curation.documents import retrieve

    with pytest.raises(NfevalError, match="retrieval method"):
        retrieve({1: "q"}, DOCS, method="google")


def test_similarity_summary_hand_checked():
    import pandas as pd

    from nfeval_repro.debateqa.curation.chunking import similarity_summary

    frame = pd.DataFrame({"mode": ["truncate"] * 3, "question_id": [1, 1, 2],
                          "cosine": [0.2, 0.4, 0.9]})
    s = similarity_summary(frame).set_index(["level", "statistic"])["ours"]
    assert s[("question", "mean")] == pytest.approx((0.3 + 0.9) / 2)
    assert s[("chunk", "mean")] == pytest.approx(0.5)
    assert s[("question", "n")] == 2 and s[("chunk", "n")] == 3


@pytest.mark.slow
def test_question_chunk_similarity_minilm():
    from nfeval_repro.debateqa.curation.chunking import question_chunk_similarity
    from nfeval_repro.debateqa.curation.documents import embedder_tokenizer

    tok = embedder_tokenizer()
    docs = {1: [DOCS[0], Document("long", "https://x.gov", "Compulsory voting raises turnout. " * 200, 1)]}
    sims = question_chunk_similarity({1: "Should voting be compulsory?"}, docs, tok, max_tokens=100)
    assert set(sims["mode"]) == {"truncate", "window-mean"}
    per_mode = sims.groupby("mode").size()
    assert (per_mode == per_mode.iloc[0]).all() and per_mode.iloc[0] > 5
    assert sims["n_tokens"].max() <= 100
    assert sims["cosine"].between(-1, 1).all() and sims["cosine"].mean() > 0.3


def test_chunk_cosines_are_exact_dots_the_same_in_any_order():
    """A question-chunk cosine is the exactly rounded dot of two float32 embeddings: the
    same bits whatever order a kernel would sum in (a float32 BLAS dot is not)."""
    import numpy as np

    from nfeval_repro.debateqa.curation.chunking import exact_dot

    rng = np.random.default_rng(1)
    a, b = (rng.normal(size=384).astype(np.float32) for _ in range(2))
    value = exact_dot(a, b)
    assert value == pytest.approx(float(a.astype(np.float64) @ b.astype(np.float64)), rel=1e-12)
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(384)
        assert exact_dot(a[order], b[order]) == value
